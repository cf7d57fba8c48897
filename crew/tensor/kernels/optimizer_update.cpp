#include "crew/tensor/kernels/optimizer_update.h"

#include "crew/tensor/kernels/dnnl_layout.h"
#include "crew/tensor/kernels/math/adam_step.h"
#include "crew/tensor/kernels/math/sgd_step.h"

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define CREW_OPTIM_AVX2 1
#endif

namespace crew::kernels {
namespace {

template <typename T>
void sgd_loop(T* __restrict p, const T* __restrict g, int64_t n, SgdStep<T> step) {
  for (int64_t i = 0; i < n; ++i) step(p[i], g[i]);
}

template <typename T, bool Nesterov>
void momentum_loop(T* __restrict p, const T* __restrict g, T* __restrict v, int64_t n,
                   MomentumStep<T, Nesterov> step) {
  for (int64_t i = 0; i < n; ++i) step(p[i], g[i], v[i]);
}

template <typename T>
AdamStep<T> adam_step(const AdamCoefficients& c) {
  return AdamStep<T>(c.beta1, c.beta2, c.lr_t, c.eps_t, c.l2, c.decay_scale);
}

// The scalar form of the Adam update on [begin, n).
template <typename T>
void adam_scalar(T* __restrict p, const T* __restrict g, T* __restrict m1, T* __restrict m2, int64_t begin,
                 int64_t n, const AdamStep<T>& step) {
  for (int64_t i = begin; i < n; ++i) step(p[i], g[i], m1[i], m2[i]);
}

// float32: 8 lanes per iteration where AVX2/FMA is available; std::sqrt's errno handling
// keeps GCC from vectorising the scalar loop, so the vector form is spelled out (the same
// operations as AdamStep, with the multiply-adds fused).
void adam_f32(float* p, const float* g, float* m1, float* m2, int64_t n, const AdamStep<float>& s) {
  int64_t i = 0;
#ifdef CREW_OPTIM_AVX2
  const __m256 b1 = _mm256_set1_ps(s.beta1), b2 = _mm256_set1_ps(s.beta2);
  const __m256 one_b1 = _mm256_set1_ps(s.one_minus_beta1), one_b2 = _mm256_set1_ps(s.one_minus_beta2);
  const __m256 lr_t = _mm256_set1_ps(s.lr_t), eps_t = _mm256_set1_ps(s.eps_t);
  const __m256 l2 = _mm256_set1_ps(s.l2), decay = _mm256_set1_ps(s.decay);
  for (; i + 8 <= n; i += 8) {
    __m256 pi = _mm256_loadu_ps(p + i);
    __m256 gi = _mm256_fmadd_ps(l2, pi, _mm256_loadu_ps(g + i));
    __m256 a = _mm256_fmadd_ps(b1, _mm256_loadu_ps(m1 + i), _mm256_mul_ps(one_b1, gi));
    __m256 b = _mm256_fmadd_ps(b2, _mm256_loadu_ps(m2 + i), _mm256_mul_ps(one_b2, _mm256_mul_ps(gi, gi)));
    _mm256_storeu_ps(m1 + i, a);
    _mm256_storeu_ps(m2 + i, b);
    __m256 step = _mm256_div_ps(_mm256_mul_ps(lr_t, a), _mm256_add_ps(_mm256_sqrt_ps(b), eps_t));
    _mm256_storeu_ps(p + i, _mm256_fmsub_ps(pi, decay, step));
  }
#endif
  adam_scalar(p, g, m1, m2, i, n, s);
}

// The operands of one update as element arrays. A parameter kept in a padding-free oneDNN
// layout (a convolution's weight, detail::adopt_layout) is updated in that layout: its state
// is converted into it once (in place), a gradient in another layout is reordered into a
// temporary, and the elementwise update runs over the bytes as they are (the same math,
// permuted), so the parameter is not converted to row-major and back every step. Anything
// else is updated row-major, as are all operands when a state cannot take the layout.
class UpdateOperands {
 public:
  UpdateOperands(const Tensor& param, const Tensor& grad, std::initializer_list<const Tensor*> state)
      : param_(param), grad_(grad) {
    const detail::DnnlLayout* l = detail::dnnl_layout_of(param);
    blocked_ = l != nullptr && detail::padding_free(*l) && grad.shape() == param.shape();
    for (const Tensor* s : state) {
      if (blocked_ && !detail::adopt_layout(*s, l->desc())) blocked_ = false;
    }
    if (blocked_) grad_ = detail::in_layout(grad, *l);
  }
  template <typename T>
  T* param() const {
    return at<T>(param_);
  }
  template <typename T>
  const T* grad() const {
    return at<T>(grad_);
  }
  template <typename T>
  T* state(const Tensor& t) const {
    return at<T>(t);
  }

 private:
  template <typename T>
  T* at(const Tensor& t) const {
    return blocked_ ? static_cast<T*>(t.layout_data()) : t.data<T>();
  }
  const Tensor& param_;
  Tensor grad_;
  bool blocked_ = false;
};

void sgd_cpu(const Tensor& param, const Tensor& grad, double lr, double l2) {
  const UpdateOperands u(param, grad, {});
  if (param.dtype() == DType::FLOAT32) {
    sgd_loop(u.param<float>(), u.grad<float>(), param.numel(),
             SgdStep<float>{static_cast<float>(lr), static_cast<float>(l2)});
  } else {
    sgd_loop(u.param<double>(), u.grad<double>(), param.numel(), SgdStep<double>{lr, l2});
  }
}

template <typename T>
void momentum_typed(const Tensor& param, const Tensor& grad, const Tensor& velocity,
                    const MomentumCoefficients& c) {
  const T lr = static_cast<T>(c.lr), mu = static_cast<T>(c.momentum), l2 = static_cast<T>(c.l2);
  const UpdateOperands u(param, grad, {&velocity});
  T* p = u.param<T>();
  const T* g = u.grad<T>();
  T* v = u.state<T>(velocity);
  if (c.nesterov) {
    momentum_loop(p, g, v, param.numel(), MomentumStep<T, true>{lr, mu, l2});
  } else {
    momentum_loop(p, g, v, param.numel(), MomentumStep<T, false>{lr, mu, l2});
  }
}

void momentum_cpu(const Tensor& param, const Tensor& grad, const Tensor& velocity,
                  const MomentumCoefficients& c) {
  if (param.dtype() == DType::FLOAT32) {
    momentum_typed<float>(param, grad, velocity, c);
  } else {
    momentum_typed<double>(param, grad, velocity, c);
  }
}

void adam_cpu(const Tensor& param, const Tensor& grad, const Tensor& m1, const Tensor& m2,
              const AdamCoefficients& c) {
  const UpdateOperands u(param, grad, {&m1, &m2});
  if (param.dtype() == DType::FLOAT32) {
    adam_f32(u.param<float>(), u.grad<float>(), u.state<float>(m1), u.state<float>(m2), param.numel(),
             adam_step<float>(c));
  } else {
    adam_scalar(u.param<double>(), u.grad<double>(), u.state<double>(m1), u.state<double>(m2), 0,
                param.numel(), adam_step<double>(c));
  }
}

void check_update(const char* op, const Tensor& param, std::initializer_list<const Tensor*> state) {
  CREW_CHECK(param.dtype() == DType::FLOAT32 || param.dtype() == DType::FLOAT64, op, ": parameter dtype ",
             dtype_name(param.dtype()), " is not float32 or float64");
  for (const Tensor* t : state) {
    CREW_CHECK(t->dtype() == param.dtype() && t->numel() == param.numel(), op, ": ", shape_str(t->shape()),
               " ", dtype_name(t->dtype()), " does not match the parameter ", shape_str(param.shape()), " ",
               dtype_name(param.dtype()));
  }
}

}  // namespace

constinit KernelSlot<SgdUpdateFn> sgd_update_kernel("sgd_update", &sgd_cpu);
constinit KernelSlot<MomentumUpdateFn> momentum_update_kernel("momentum_update", &momentum_cpu);
constinit KernelSlot<AdamUpdateFn> adam_update_kernel("adam_update", &adam_cpu);

void sgd_update(const Tensor& param, const Tensor& grad, double lr, double l2) {
  check_update("sgd_update", param, {&grad});
  check_same_place("sgd_update", {{"param", &param}, {"grad", &grad}});
  sgd_update_kernel.get(param.place().type)(param, grad, lr, l2);
}

void momentum_update(const Tensor& param, const Tensor& grad, const Tensor& velocity,
                     const MomentumCoefficients& c) {
  check_update("momentum_update", param, {&grad, &velocity});
  check_same_place("momentum_update", {{"param", &param}, {"grad", &grad}, {"velocity", &velocity}});
  momentum_update_kernel.get(param.place().type)(param, grad, velocity, c);
}

void adam_update(const Tensor& param, const Tensor& grad, const Tensor& m1, const Tensor& m2,
                 const AdamCoefficients& c) {
  check_update("adam_update", param, {&grad, &m1, &m2});
  check_same_place("adam_update", {{"param", &param}, {"grad", &grad}, {"moment1", &m1}, {"moment2", &m2}});
  adam_update_kernel.get(param.place().type)(param, grad, m1, m2, c);
}

}  // namespace crew::kernels
