#include "crew/tensor/kernels/eltwise_param.h"

#include <cmath>

#include "crew/core/check.h"
#include "crew/tensor/kernels/broadcast.h"
#include "crew/tensor/kernels/dnnl_context.h"
#include "crew/tensor/kernels/dnnl_layout.h"

namespace crew::kernels {
namespace {

const char* op_name(EltwiseOp op) {
  switch (op) {
    case EltwiseOp::ELU:
      return "elu";
    case EltwiseOp::SELU:
      return "selu";
    case EltwiseOp::SWISH:
      return "swish";
    case EltwiseOp::MISH:
      return "mish";
    case EltwiseOp::HARDSIGMOID:
      return "hardsigmoid";
    case EltwiseOp::HARDTANH:
      return "hardtanh";
    case EltwiseOp::SOFTSIGN:
      return "softsign";
    case EltwiseOp::TANHSHRINK:
      return "tanhshrink";
  }
  return "eltwise";
}

// The oneDNN algorithm for float32, or false when oneDNN 2.6 has none (then a loop runs).
bool dnnl_algorithm(EltwiseOp op, dnnl::algorithm* alg) {
  switch (op) {
    case EltwiseOp::ELU:
      *alg = dnnl::algorithm::eltwise_elu;
      return true;
    case EltwiseOp::SWISH:
      *alg = dnnl::algorithm::eltwise_swish;
      return true;
    case EltwiseOp::MISH:
      *alg = dnnl::algorithm::eltwise_mish;
      return true;
    case EltwiseOp::HARDTANH:
      *alg = dnnl::algorithm::eltwise_clip_v2;
      return true;
    default:
      return false;
  }
}

double softplus(double x) { return x > 20 ? x : std::log1p(std::exp(x)); }

double forward_value(const EltwiseParams& p, double x) {
  switch (p.op) {
    case EltwiseOp::ELU:
      return x > 0 ? x : p.alpha * std::expm1(x);
    case EltwiseOp::SELU:
      return p.beta * (x > 0 ? x : p.alpha * std::expm1(x));
    case EltwiseOp::SWISH:
      return x / (1 + std::exp(-p.alpha * x));
    case EltwiseOp::MISH:
      return x * std::tanh(softplus(x));
    case EltwiseOp::HARDSIGMOID:
      return std::min(1.0, std::max(0.0, p.alpha * x + p.beta));
    case EltwiseOp::HARDTANH:
      return std::min(p.beta, std::max(p.alpha, x));
    case EltwiseOp::SOFTSIGN:
      return x / (1 + std::abs(x));
    case EltwiseOp::TANHSHRINK:
      return x - std::tanh(x);
  }
  return 0;
}

double derivative(const EltwiseParams& p, double x) {
  switch (p.op) {
    case EltwiseOp::ELU:
      return x > 0 ? 1 : p.alpha * std::exp(x);
    case EltwiseOp::SELU:
      return p.beta * (x > 0 ? 1 : p.alpha * std::exp(x));
    case EltwiseOp::SWISH: {
      const double s = 1 / (1 + std::exp(-p.alpha * x));
      return s + p.alpha * x * s * (1 - s);
    }
    case EltwiseOp::MISH: {
      const double t = std::tanh(softplus(x));
      const double s = x > 20 ? 1.0 : 1 / (1 + std::exp(-x));
      return t + x * (1 - t * t) * s;
    }
    case EltwiseOp::HARDSIGMOID: {
      const double v = p.alpha * x + p.beta;
      return v > 0 && v < 1 ? p.alpha : 0;
    }
    case EltwiseOp::HARDTANH:
      return x > p.alpha && x < p.beta ? 1 : 0;
    case EltwiseOp::SOFTSIGN: {
      const double d = 1 + std::abs(x);
      return 1 / (d * d);
    }
    case EltwiseOp::TANHSHRINK: {
      const double t = std::tanh(x);
      return t * t;
    }
  }
  return 0;
}

template <typename T>
Tensor forward_loop(const EltwiseParams& p, const Tensor& x) {
  Tensor y = Tensor::uninitialized(x.shape(), x.dtype());
  const int64_t n = x.numel();
  if (n == 0) return y;
  const T* xp = x.data<T>();
  T* yp = y.data<T>();
  crew::detail::parallel_for(n, 4096, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) yp[i] = static_cast<T>(forward_value(p, xp[i]));
  });
  return y;
}

template <typename T>
Tensor backward_loop(const EltwiseParams& p, const Tensor& grad_y, const Tensor& x) {
  Tensor gx = Tensor::uninitialized(x.shape(), x.dtype());
  const int64_t n = x.numel();
  if (n == 0) return gx;
  const T* g = grad_y.data<T>();
  const T* xp = x.data<T>();
  T* out = gx.data<T>();
  crew::detail::parallel_for(n, 4096, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) out[i] = static_cast<T>(g[i] * derivative(p, xp[i]));
  });
  return gx;
}

struct Entry {
  dnnl::eltwise_forward fwd;
  dnnl::eltwise_backward bwd;
  dnnl::memory::desc md;
};

// On a row-major tensor of numel elements (layout null) or on one in a blocked `layout` (a
// conv's output, kept as it is: elementwise ops work on any layout).
std::shared_ptr<Entry> entry(const EltwiseParams& p, dnnl::algorithm alg, int64_t numel,
                             const detail::DnnlLayout* layout) {
  static detail::PrimitiveCache<Entry> cache;
  const void* layout_key = layout;  // one shared DnnlLayout per desc: its address names it
  return cache.get(str_cat(static_cast<int>(p.op), ':', numel, ':', p.alpha, ':', p.beta, ':', layout_key), [&] {
    auto e = std::make_shared<Entry>();
    e->md = layout ? layout->desc() : detail::plain_desc({numel});
    const auto a = static_cast<float>(p.alpha), b = static_cast<float>(p.beta);
    dnnl::eltwise_forward::desc fd(dnnl::prop_kind::forward_training, alg, e->md, a, b);
    dnnl::eltwise_forward::primitive_desc fpd(fd, detail::cpu_engine());
    e->fwd = dnnl::eltwise_forward(fpd);
    dnnl::eltwise_backward::desc bd(alg, e->md, e->md, a, b);
    e->bwd = dnnl::eltwise_backward(dnnl::eltwise_backward::primitive_desc(bd, detail::cpu_engine(), fpd));
    return e;
  });
}

dnnl::memory memory_of(const Entry& e, const Tensor& t, const detail::DnnlLayout* layout) {
  return detail::memory_in(e.md, t, layout);
}

Tensor eltwise_forward_cpu(const EltwiseParams& p, const Tensor& x) {
  check_floating(x, op_name(p.op));
  dnnl::algorithm alg{};
  if (x.dtype() == DType::FLOAT64) return forward_loop<double>(p, x);
  if (!dnnl_algorithm(p.op, &alg) || x.numel() == 0) return forward_loop<float>(p, x);
  try {
    const detail::DnnlLayout* layout = detail::dnnl_layout_of(x);  // a blocked x stays blocked
    auto e = entry(p, alg, x.numel(), layout);
    Tensor y = detail::new_in(x, layout);
    e->fwd.execute(detail::cpu_stream(),
                   {{DNNL_ARG_SRC, memory_of(*e, x, layout)}, {DNNL_ARG_DST, memory_of(*e, y, layout)}});
    return y;
  } catch (const dnnl::error& err) {
    detail::rethrow_dnnl(op_name(p.op), err);
  }
}

Tensor eltwise_backward_cpu(const EltwiseParams& p, const Tensor& grad_y, const Tensor& x) {
  check_floating(grad_y, op_name(p.op));
  CREW_CHECK(grad_y.numel() == x.numel() && grad_y.dtype() == x.dtype(), op_name(p.op), " backward: grad ",
             shape_str(grad_y.shape()), " ", dtype_name(grad_y.dtype()), " does not match input ",
             shape_str(x.shape()), " ", dtype_name(x.dtype()));
  dnnl::algorithm alg{};
  if (x.dtype() == DType::FLOAT64) return backward_loop<double>(p, grad_y, x);
  if (!dnnl_algorithm(p.op, &alg) || x.numel() == 0) return backward_loop<float>(p, grad_y, x);
  try {
    // In x's blocked layout when it has one (a row-major grad_y is reordered into it).
    const detail::DnnlLayout* layout = grad_y.shape() == x.shape() ? detail::dnnl_layout_of(x) : nullptr;
    const Tensor g = layout ? detail::in_layout(grad_y, *layout) : grad_y;
    auto e = entry(p, alg, x.numel(), layout);
    Tensor gx = detail::new_in(x, layout);
    e->bwd.execute(detail::cpu_stream(), {{DNNL_ARG_SRC, memory_of(*e, x, layout)},
                                          {DNNL_ARG_DIFF_DST, memory_of(*e, g, layout)},
                                          {DNNL_ARG_DIFF_SRC, memory_of(*e, gx, layout)}});
    return gx;
  } catch (const dnnl::error& err) {
    detail::rethrow_dnnl(op_name(p.op), err);
  }
}

}  // namespace

constinit KernelSlot<EltwiseForwardFn> eltwise_forward_kernel("eltwise_forward", &eltwise_forward_cpu);
constinit KernelSlot<EltwiseBackwardFn> eltwise_backward_kernel("eltwise_backward", &eltwise_backward_cpu);

Tensor eltwise_forward(const EltwiseParams& p, const Tensor& x) {
  return eltwise_forward_kernel.get(x.place().type)(p, x);
}

Tensor eltwise_backward(const EltwiseParams& p, const Tensor& grad_y, const Tensor& x) {
  check_same_place(op_name(p.op), {{"grad_y", &grad_y}, {"x", &x}});
  return eltwise_backward_kernel.get(grad_y.place().type)(p, grad_y, x);
}

}  // namespace crew::kernels
