#include "crew/tensor/kernels/adaptive_update.h"

#include <cmath>
#include <vector>

#include "crew/core/check.h"
#include "crew/tensor/kernels/math/adamax_step.h"
#include "crew/tensor/kernels/math/adaptive_step.h"

namespace crew::kernels {
namespace {

void check_state(const char* op, const Tensor& param,
                 std::initializer_list<std::pair<const char*, const Tensor*>> state) {
  CREW_CHECK(param.dtype() == DType::FLOAT32 || param.dtype() == DType::FLOAT64, op, ": parameter dtype ",
             dtype_name(param.dtype()), " is not float32 or float64");
  for (const auto& [name, t] : state) {
    CREW_CHECK(
        t->defined() && t->dtype() == param.dtype() && t->numel() == param.numel(), op, ": ", name, " ",
        t->defined() ? shape_str(t->shape()) + " " + dtype_name(t->dtype()) : std::string("(undefined)"),
        " does not match the parameter ", shape_str(param.shape()), " ", dtype_name(param.dtype()));
  }
  for (const auto& entry : state) check_same_place(op, {{"param", &param}, entry});
}

// Calls body.template operator()<T>() with T the parameter's dtype.
template <typename Body>
void by_dtype(const Tensor& param, Body&& body) {
  if (param.dtype() == DType::FLOAT32) {
    body.template operator()<float>();
  } else {
    body.template operator()<double>();
  }
}

void rmsprop_cpu(const Tensor& param, const Tensor& grad, const Tensor& ms, const Tensor& mg,
                 const Tensor& mom, const RmspropCoefficients& c) {
  by_dtype(param, [&]<typename T>() {
    const RmspropStep<T> step(c.lr, c.rho, c.epsilon, c.momentum, c.l2);
    T* __restrict p = param.data<T>();
    const T* __restrict g = grad.data<T>();
    T* __restrict s = ms.data<T>();
    T* __restrict v = mom.data<T>();
    const int64_t n = param.numel();
    if (c.centered) {
      T* __restrict a = mg.data<T>();
      for (int64_t i = 0; i < n; ++i) step(p[i], g[i], s[i], a[i], v[i]);
    } else {
      for (int64_t i = 0; i < n; ++i) step(p[i], g[i], s[i], v[i]);
    }
  });
}

void adagrad_cpu(const Tensor& param, const Tensor& grad, const Tensor& moment,
                 const AdagradCoefficients& c) {
  by_dtype(param, [&]<typename T>() {
    const AdagradStep<T> step{static_cast<T>(c.lr), static_cast<T>(c.epsilon), static_cast<T>(c.l2)};
    T* __restrict p = param.data<T>();
    const T* __restrict g = grad.data<T>();
    T* __restrict m = moment.data<T>();
    for (int64_t i = 0, n = param.numel(); i < n; ++i) step(p[i], g[i], m[i]);
  });
}

void adadelta_cpu(const Tensor& param, const Tensor& grad, const Tensor& asg, const Tensor& asu,
                  const AdadeltaCoefficients& c) {
  by_dtype(param, [&]<typename T>() {
    const AdadeltaStep<T> step(c.rho, c.epsilon, c.l2);
    T* __restrict p = param.data<T>();
    const T* __restrict g = grad.data<T>();
    T* __restrict a = asg.data<T>();
    T* __restrict u = asu.data<T>();
    for (int64_t i = 0, n = param.numel(); i < n; ++i) step(p[i], g[i], a[i], u[i]);
  });
}

void adamax_cpu(const Tensor& param, const Tensor& grad, const Tensor& moment, const Tensor& inf_norm,
                const AdamaxCoefficients& c) {
  by_dtype(param, [&]<typename T>() {
    const AdamaxStep<T> step(c.beta1, c.beta2, c.epsilon, c.lr_t, c.l2);
    T* __restrict p = param.data<T>();
    const T* __restrict g = grad.data<T>();
    T* __restrict m = moment.data<T>();
    T* __restrict u = inf_norm.data<T>();
    for (int64_t i = 0, n = param.numel(); i < n; ++i) step(p[i], g[i], m[i], u[i]);
  });
}

// Two passes: the moments and r (kept in a scratch buffer) with the squared norms of p and
// r summed in double, then the update scaled by the trust ratio.
void lamb_cpu(const Tensor& param, const Tensor& grad, const Tensor& m1, const Tensor& m2,
              const LambCoefficients& c) {
  by_dtype(param, [&]<typename T>() {
    const LambMomentStep<T> moments(c.beta1, c.beta2, c.beta1_pow, c.beta2_pow, c.epsilon, c.weight_decay);
    T* __restrict p = param.data<T>();
    const T* __restrict g = grad.data<T>();
    T* __restrict a = m1.data<T>();
    T* __restrict b = m2.data<T>();
    const int64_t n = param.numel();
    std::vector<T> r(static_cast<size_t>(n));
    double p_sq = 0.0, r_sq = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      r[i] = moments(p[i], g[i], a[i], b[i]);
      p_sq += static_cast<double>(p[i]) * p[i];
      r_sq += static_cast<double>(r[i]) * r[i];
    }
    const double ratio = (p_sq > 0.0 && r_sq > 0.0) ? std::sqrt(p_sq) / std::sqrt(r_sq) : 1.0;
    const T scale = static_cast<T>(c.lr * ratio);
    for (int64_t i = 0; i < n; ++i) p[i] -= scale * r[i];
  });
}

}  // namespace

constinit KernelSlot<RmspropUpdateFn> rmsprop_update_kernel("rmsprop_update", &rmsprop_cpu);
constinit KernelSlot<AdagradUpdateFn> adagrad_update_kernel("adagrad_update", &adagrad_cpu);
constinit KernelSlot<AdadeltaUpdateFn> adadelta_update_kernel("adadelta_update", &adadelta_cpu);
constinit KernelSlot<AdamaxUpdateFn> adamax_update_kernel("adamax_update", &adamax_cpu);
constinit KernelSlot<LambUpdateFn> lamb_update_kernel("lamb_update", &lamb_cpu);

void rmsprop_update(const Tensor& param, const Tensor& grad, const Tensor& mean_square,
                    const Tensor& mean_grad, const Tensor& moment, const RmspropCoefficients& c) {
  if (c.centered) {
    check_state(
        "rmsprop_update", param,
        {{"grad", &grad}, {"mean_square", &mean_square}, {"mean_grad", &mean_grad}, {"momentum", &moment}});
  } else {
    check_state("rmsprop_update", param,
                {{"grad", &grad}, {"mean_square", &mean_square}, {"momentum", &moment}});
  }
  rmsprop_update_kernel.get(param.place().type)(param, grad, mean_square, mean_grad, moment, c);
}

void adagrad_update(const Tensor& param, const Tensor& grad, const Tensor& moment,
                    const AdagradCoefficients& c) {
  check_state("adagrad_update", param, {{"grad", &grad}, {"moment", &moment}});
  adagrad_update_kernel.get(param.place().type)(param, grad, moment, c);
}

void adadelta_update(const Tensor& param, const Tensor& grad, const Tensor& avg_squared_grad,
                     const Tensor& avg_squared_update, const AdadeltaCoefficients& c) {
  check_state("adadelta_update", param,
              {{"grad", &grad},
               {"avg_squared_grad", &avg_squared_grad},
               {"avg_squared_update", &avg_squared_update}});
  adadelta_update_kernel.get(param.place().type)(param, grad, avg_squared_grad, avg_squared_update, c);
}

void adamax_update(const Tensor& param, const Tensor& grad, const Tensor& moment, const Tensor& inf_norm,
                   const AdamaxCoefficients& c) {
  check_state("adamax_update", param, {{"grad", &grad}, {"moment", &moment}, {"inf_norm", &inf_norm}});
  adamax_update_kernel.get(param.place().type)(param, grad, moment, inf_norm, c);
}

void lamb_update(const Tensor& param, const Tensor& grad, const Tensor& m1, const Tensor& m2,
                 const LambCoefficients& c) {
  check_state("lamb_update", param, {{"grad", &grad}, {"moment1", &m1}, {"moment2", &m2}});
  lamb_update_kernel.get(param.place().type)(param, grad, m1, m2, c);
}

}  // namespace crew::kernels
