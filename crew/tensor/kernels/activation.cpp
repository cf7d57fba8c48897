#include "crew/tensor/kernels/activation.h"

#include <cmath>

#include "crew/core/check.h"
#include "crew/tensor/kernels/broadcast.h"
#include "crew/tensor/kernels/dnnl_context.h"
#include "crew/tensor/kernels/dnnl_layout.h"
#include "crew/tensor/kernels/low_precision.h"
#include "crew/tensor/kernels/math/gelu.h"

namespace crew::kernels {
namespace {

// relu, sigmoid and tanh backpropagate from their output (nothing else needs keeping).
dnnl::algorithm algorithm_of(Activation kind) {
  switch (kind) {
    case Activation::RELU:
      return dnnl::algorithm::eltwise_relu_use_dst_for_bwd;
    case Activation::SIGMOID:
      return dnnl::algorithm::eltwise_logistic_use_dst_for_bwd;
    case Activation::TANH:
      return dnnl::algorithm::eltwise_tanh_use_dst_for_bwd;
    case Activation::GELU_ERF:
      return dnnl::algorithm::eltwise_gelu_erf;
    case Activation::GELU_TANH:
      return dnnl::algorithm::eltwise_gelu_tanh;
  }
  return dnnl::algorithm::eltwise_relu;
}

struct Entry {
  dnnl::eltwise_forward::primitive_desc fwd_pd;
  dnnl::eltwise_forward fwd;
  dnnl::eltwise_backward bwd;
  dnnl::memory::desc md;
};

// On a row-major tensor of numel elements (layout null), or on one in `layout` (the same
// layout in and out: elementwise, so any layout works as it is).
// dtype: float32 or bfloat16 (a layout's desc carries its own).
std::shared_ptr<Entry> entry(Activation kind, int64_t numel, const detail::DnnlLayout* layout, DType dtype) {
  static detail::PrimitiveCache<Entry> cache;
  // The shared DnnlLayout of a desc is one object for the process: its address names it.
  return cache.get(str_cat(static_cast<int>(kind), ':', numel, ':', static_cast<const void*>(layout), ':',
                           dtype_name(dtype)),
                   [&] {
                     auto e = std::make_shared<Entry>();
                     e->md = layout ? layout->desc() : detail::plain_desc({numel}, detail::dnnl_type(dtype));
                     dnnl::eltwise_forward::desc fd(dnnl::prop_kind::forward_training, algorithm_of(kind),
                                                    e->md, 0.f, 0.f);
                     e->fwd_pd = dnnl::eltwise_forward::primitive_desc(fd, detail::cpu_engine());
                     e->fwd = dnnl::eltwise_forward(e->fwd_pd);
                     dnnl::eltwise_backward::desc bd(algorithm_of(kind), e->md, e->md, 0.f, 0.f);
                     e->bwd = dnnl::eltwise_backward(
                         dnnl::eltwise_backward::primitive_desc(bd, detail::cpu_engine(), e->fwd_pd));
                     return e;
                   });
}

// The memory of t for entry e: its bytes as they are when e works on `layout`, else t
// row-major (converted if it was blocked).
dnnl::memory memory_of(const Entry& e, const Tensor& t, const detail::DnnlLayout* layout) {
  return detail::memory_in(e.md, t, layout);
}

constexpr double kSqrt2OverPi = 0.7978845608028654;

double forward_value(Activation kind, double x) {
  switch (kind) {
    case Activation::RELU:
      return x > 0 ? x : 0;
    case Activation::SIGMOID:
      return 1 / (1 + std::exp(-x));
    case Activation::TANH:
      return std::tanh(x);
    case Activation::GELU_ERF:
      return math::GeluErf<double>::forward(x);
    case Activation::GELU_TANH:
      return 0.5 * x * (1 + std::tanh(kSqrt2OverPi * (x + 0.044715 * x * x * x)));
  }
  return 0;
}

// d y / d x at input x with output y.
double derivative(Activation kind, double x, double y) {
  switch (kind) {
    case Activation::RELU:
      return y > 0 ? 1 : 0;
    case Activation::SIGMOID:
      return y * (1 - y);
    case Activation::TANH:
      return 1 - y * y;
    case Activation::GELU_ERF:
      return math::GeluErf<double>::derivative(x);
    case Activation::GELU_TANH: {
      const double t = std::tanh(kSqrt2OverPi * (x + 0.044715 * x * x * x));
      return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * kSqrt2OverPi * (1 + 3 * 0.044715 * x * x);
    }
  }
  return 0;
}

bool uses_output_only(Activation kind) {
  return kind == Activation::RELU || kind == Activation::SIGMOID || kind == Activation::TANH;
}

Tensor activation_forward_cpu(Activation kind, const Tensor& x) {
  check_floating_or_half(x, "activation");
  const int64_t n = x.numel();
  if (x.dtype() == DType::FLOAT64 || n == 0) {
    Tensor y = Tensor::uninitialized(x.shape(), x.dtype());
    const double* xp = n ? x.data<double>() : nullptr;
    double* yp = n ? y.data<double>() : nullptr;
    for (int64_t i = 0; i < n; ++i) yp[i] = forward_value(kind, xp[i]);
    return y;
  }
  try {
    // A blocked input (a conv's output) stays blocked: same layout in and out.
    const detail::DnnlLayout* layout = detail::dnnl_layout_of(x);
    auto e = entry(kind, n, layout, x.dtype());
    Tensor y = detail::new_in(x, layout);
    e->fwd.execute(detail::cpu_stream(),
                   {{DNNL_ARG_SRC, memory_of(*e, x, layout)}, {DNNL_ARG_DST, memory_of(*e, y, layout)}});
    return y;
  } catch (const dnnl::error& err) {
    detail::rethrow_dnnl("activation forward", err);
  }
}

Tensor activation_backward_cpu(Activation kind, const Tensor& grad_y, const Tensor& x, const Tensor& y,
                               bool in_place) {
  check_floating_or_half(grad_y, "activation backward");
  CREW_CHECK(grad_y.numel() == y.numel() && grad_y.dtype() == y.dtype(), "activation backward: grad ",
             shape_str(grad_y.shape()), " does not match output ", shape_str(y.shape()));
  const bool from_output = uses_output_only(kind);
  CREW_CHECK(x.defined() || from_output, "activation backward: this activation needs its input");
  const int64_t n = grad_y.numel();
  if (grad_y.dtype() == DType::FLOAT64 || n == 0) {
    Tensor gx = in_place ? grad_y : Tensor::uninitialized(grad_y.shape(), grad_y.dtype());
    const double* g = n ? grad_y.data<double>() : nullptr;
    const double* xp = x.defined() && n ? x.data<double>() : nullptr;
    const double* yp = n ? y.data<double>() : nullptr;
    double* out = n ? gx.data<double>() : nullptr;
    for (int64_t i = 0; i < n; ++i) out[i] = g[i] * derivative(kind, xp ? xp[i] : 0.0, yp[i]);
    return gx;
  }
  try {
    const Tensor& saved = from_output ? y : x;
    // Blocked when the saved tensor is (a row-major grad_y is reordered into its layout, see
    // detail::in_layout); a blocked grad_y with a row-major saved tensor is read row-major.
    const detail::DnnlLayout* layout =
        grad_y.shape() == saved.shape() ? detail::dnnl_layout_of(saved) : nullptr;
    const Tensor g = layout ? detail::in_layout(grad_y, *layout) : grad_y;
    auto e = entry(kind, n, layout, grad_y.dtype());
    // In place (oneDNN's eltwise backward allows diff_src = diff_dst): gx is g, in the layout
    // g is read in (memory_of converts it to row-major first when layout is null).
    dnnl::memory diff_dst = memory_of(*e, g, layout);
    Tensor gx = in_place ? g : detail::new_in(grad_y, layout);
    e->bwd.execute(detail::cpu_stream(),
                   {{from_output ? DNNL_ARG_DST : DNNL_ARG_SRC, memory_of(*e, saved, layout)},
                    {DNNL_ARG_DIFF_DST, diff_dst},
                    {DNNL_ARG_DIFF_SRC, in_place ? diff_dst : memory_of(*e, gx, layout)}});
    return gx;
  } catch (const dnnl::error& err) {
    detail::rethrow_dnnl("activation backward", err);
  }
}

}  // namespace

constinit KernelSlot<ActivationForwardFn> activation_forward_kernel("activation_forward",
                                                                    &activation_forward_cpu);
constinit KernelSlot<ActivationBackwardFn> activation_backward_kernel("activation_backward",
                                                                      &activation_backward_cpu);

bool activation_backward_uses_output_only(Activation kind) { return uses_output_only(kind); }

// bfloat16 runs on oneDNN's bf16 eltwise (in the blocked layout a bf16 conv wrote); float16,
// and bfloat16 where oneDNN has no kernel, run through float32.
Tensor activation_forward(Activation kind, const Tensor& x) {
  if (is_low_precision(x.dtype()) && !dnnl_supports(x.dtype(), "activation")) {
    return activation_forward(kind, to_float32(x)).to(x.dtype());
  }
  return activation_forward_kernel.get(x.place().type)(kind, x);
}

Tensor activation_backward(Activation kind, const Tensor& grad_y, const Tensor& x, const Tensor& y,
                           bool in_place) {
  check_same_place("activation backward", {{"grad_y", &grad_y}, {"x", &x}, {"y", &y}});
  check_same_dtype("activation backward", "grad_y", grad_y, "y", y);
  if (is_low_precision(grad_y.dtype()) && !dnnl_supports(grad_y.dtype(), "activation backward")) {
    const Tensor x32 = x.defined() ? to_float32(x) : x;
    return activation_backward(kind, to_float32(grad_y), x32, to_float32(y), true).to(grad_y.dtype());
  }
  return activation_backward_kernel.get(grad_y.place().type)(kind, grad_y, x, y, in_place);
}

}  // namespace crew::kernels
