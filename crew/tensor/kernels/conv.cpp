#include "crew/tensor/kernels/conv.h"

#include "crew/core/check.h"
#include "crew/core/env.h"
#include "crew/tensor/kernels/dnnl_context.h"
#include "crew/tensor/kernels/dnnl_layout.h"
#include "crew/tensor/kernels/low_precision.h"

namespace crew::kernels {
namespace {

using detail::LayoutBridge;
using dnnl::memory;

// Everything that identifies one convolution configuration.
struct ConvGeometry {
  memory::dims src, weights, bias, dst, strides, dilates, pad_l, pad_r;
  memory::data_type dt = memory::data_type::f32;  // of every operand, bias included
  std::string key;
};

ConvGeometry geometry(const Shape& x, const Shape& w, const Conv2dParams& p, DType dtype) {
  const Shape y = conv2d_output_shape(x, w, p);
  ConvGeometry g;
  g.dt = detail::dnnl_type(dtype);
  g.src = detail::to_dims(x);
  g.dst = detail::to_dims(y);
  if (p.groups == 1) {
    g.weights = detail::to_dims(w);
  } else {
    g.weights = {p.groups, w[0] / p.groups, w[1], w[2], w[3]};
  }
  g.bias = {w[0]};
  g.strides = {p.stride[0], p.stride[1]};
  g.dilates = {p.dilation[0] - 1, p.dilation[1] - 1};
  g.pad_l = {p.padding[0], p.padding[1]};
  // Right padding that makes oneDNN's size formula give exactly y (it may be below pad_l
  // when the floor in the output size drops trailing rows).
  for (int i = 0; i < 2; ++i) {
    const int64_t span = (w[2 + i] - 1) * p.dilation[i] + 1;
    int64_t r = (y[2 + i] - 1) * p.stride[i] + span - x[2 + i] - p.padding[i];
    g.pad_r.push_back(r < 0 ? 0 : r);
  }
  g.key = str_cat(shape_str(x), shape_str(w), p.stride[0], ',', p.stride[1], ',', p.padding[0], ',',
                  p.padding[1], ',', p.dilation[0], ',', p.dilation[1], ',', p.groups, dtype_name(dtype));
  return g;
}

// Layouts. With plain NCHW everywhere oneDNN falls back to im2col + gemm ("gemm:jit");
// letting it pick (format any -> nChw8c on AVX2, nChw16c on AVX-512) selects its direct jit
// kernels, faster even counting the reorders of activations in and out of each call.
// Exception, below AVX-512: the weight gradient of a layer with few input channels (the
// first layer, C = 1 or 3) is faster as gemm on plain data; with AVX-512 the jit kernel wins
// even with its reorder. docs/kernels.md ("Memory formats") has the figures.
// CREW_CONV_PLAIN=1 forces plain layouts everywhere (for comparisons).
bool plain_only() {
  static const bool plain = env::get_bool("CREW_CONV_PLAIN", false);
  return plain;
}

bool weight_layout_enabled() {
  static const bool on = env::get_bool("CREW_WEIGHT_LAYOUT", true);
  return on;
}

bool plain_weight_grad_for_few_channels() {
  static const bool plain = dnnl::get_effective_cpu_isa() < dnnl::cpu_isa::avx512_core;
  return plain;
}

enum class Pass { FORWARD, BACKWARD_DATA, BACKWARD_WEIGHTS };

memory::desc wanted_desc(const memory::dims& dims, Pass pass, int64_t in_channels, memory::data_type dt) {
  if (plain_only()) return detail::plain_desc(dims, dt);
  if (pass == Pass::BACKWARD_WEIGHTS && in_channels < 8 && plain_weight_grad_for_few_channels()) {
    return detail::plain_desc(dims, dt);
  }
  return memory::desc(dims, dt, memory::format_tag::any);
}

memory::desc weights_any(const memory::dims& dims, memory::data_type dt) {
  return memory::desc(dims, dt, memory::format_tag::any);
}

struct ForwardEntry {
  dnnl::convolution_forward::primitive_desc pd;
  dnnl::convolution_forward prim;
  LayoutBridge src, weights, dst;
};

std::shared_ptr<ForwardEntry> build_forward(const ConvGeometry& g, bool with_bias) {
  auto e = std::make_shared<ForwardEntry>();
  memory::desc bias_md = with_bias ? detail::plain_desc(g.bias, g.dt) : memory::desc();
  dnnl::convolution_forward::desc d(
      dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct,
      wanted_desc(g.src, Pass::FORWARD, g.src[1], g.dt), weights_any(g.weights, g.dt), bias_md,
      wanted_desc(g.dst, Pass::FORWARD, g.src[1], g.dt), g.strides, g.dilates, g.pad_l, g.pad_r);
  e->pd = dnnl::convolution_forward::primitive_desc(d, detail::user_scratchpad(), detail::cpu_engine());
  e->prim = dnnl::convolution_forward(e->pd);
  e->src = LayoutBridge(detail::plain_desc(g.src, g.dt), e->pd.src_desc());
  e->weights = LayoutBridge(detail::plain_desc(g.weights, g.dt), e->pd.weights_desc());
  e->dst = LayoutBridge(detail::plain_desc(g.dst, g.dt), e->pd.dst_desc());
  return e;
}

detail::PrimitiveCache<ForwardEntry>& forward_cache() {
  static detail::PrimitiveCache<ForwardEntry> cache;
  return cache;
}

std::shared_ptr<ForwardEntry> forward_entry(const ConvGeometry& g, bool with_bias) {
  return forward_cache().get(str_cat("fwd", with_bias, g.key), [&] { return build_forward(g, with_bias); });
}

struct BackwardDataEntry {
  dnnl::convolution_backward_data prim;
  LayoutBridge diff_src, weights, diff_dst;
};

struct BackwardWeightsEntry {
  dnnl::convolution_backward_weights prim;
  LayoutBridge src, diff_weights, diff_dst;
  bool with_bias = false;
};

detail::PrimitiveCache<BackwardDataEntry>& bwd_data_cache() {
  static detail::PrimitiveCache<BackwardDataEntry> cache;
  return cache;
}

detail::PrimitiveCache<BackwardWeightsEntry>& bwd_weights_cache() {
  static detail::PrimitiveCache<BackwardWeightsEntry> cache;
  return cache;
}

std::shared_ptr<BackwardDataEntry> bwd_data_entry(const ConvGeometry& g) {
  return bwd_data_cache().get("bwd_data" + g.key, [&] {
    auto fwd = forward_entry(g, false);
    auto b = std::make_shared<BackwardDataEntry>();
    dnnl::convolution_backward_data::desc d(
        dnnl::algorithm::convolution_direct, wanted_desc(g.src, Pass::BACKWARD_DATA, g.src[1], g.dt),
        weights_any(g.weights, g.dt), wanted_desc(g.dst, Pass::BACKWARD_DATA, g.src[1], g.dt), g.strides,
        g.dilates, g.pad_l, g.pad_r);
    dnnl::convolution_backward_data::primitive_desc pd(d, detail::user_scratchpad(), detail::cpu_engine(),
                                                       fwd->pd);
    b->prim = dnnl::convolution_backward_data(pd);
    b->diff_src = LayoutBridge(detail::plain_desc(g.src, g.dt), pd.diff_src_desc());
    b->weights = LayoutBridge(detail::plain_desc(g.weights, g.dt), pd.weights_desc());
    b->diff_dst = LayoutBridge(detail::plain_desc(g.dst, g.dt), pd.diff_dst_desc());
    return b;
  });
}

std::shared_ptr<BackwardWeightsEntry> bwd_weights_entry(const ConvGeometry& g, bool with_bias) {
  return bwd_weights_cache().get(str_cat("bwd_w", with_bias, g.key), [&] {
    auto fwd = forward_entry(g, with_bias);
    auto b = std::make_shared<BackwardWeightsEntry>();
    memory::desc bias_md = with_bias ? detail::plain_desc(g.bias, g.dt) : memory::desc();
    dnnl::convolution_backward_weights::desc d(
        dnnl::algorithm::convolution_direct, wanted_desc(g.src, Pass::BACKWARD_WEIGHTS, g.src[1], g.dt),
        weights_any(g.weights, g.dt), bias_md, wanted_desc(g.dst, Pass::BACKWARD_WEIGHTS, g.src[1], g.dt),
        g.strides, g.dilates, g.pad_l, g.pad_r);
    dnnl::convolution_backward_weights::primitive_desc pd(d, detail::user_scratchpad(), detail::cpu_engine(),
                                                          fwd->pd);
    b->prim = dnnl::convolution_backward_weights(pd);
    b->src = LayoutBridge(detail::plain_desc(g.src, g.dt), pd.src_desc());
    b->diff_weights = LayoutBridge(detail::plain_desc(g.weights, g.dt), pd.diff_weights_desc());
    b->diff_dst = LayoutBridge(detail::plain_desc(g.dst, g.dt), pd.diff_dst_desc());
    b->with_bias = with_bias;
    return b;
  });
}

// conv2d runs float32, bfloat16 and float16 (all operands of one dtype).
void check_dtype(const Tensor& t, DType dtype, const char* op, const char* what) {
  CREW_CHECK_T(DTypeError, t.dtype() == DType::FLOAT32 || is_low_precision(t.dtype()), op, ": ", what,
               " must be float32, bfloat16 or float16, got ", dtype_name(t.dtype()));
  CREW_CHECK_T(DTypeError, t.dtype() == dtype, op, ": ", what, " is ", dtype_name(t.dtype()), ", expected ",
               dtype_name(dtype), " as the other operands");
}

// Whether a 16-bit convolution must run as float32 (no oneDNN kernel for its dtype here).
bool via_float32(DType dtype, const char* op) { return is_low_precision(dtype) && !dnnl_supports(dtype, op); }

}  // namespace

Shape conv2d_output_shape(const Shape& x, const Shape& w, const Conv2dParams& p) {
  CREW_CHECK(x.size() == 4, "conv2d: input must be 4-d NCHW, got shape ", shape_str(x));
  CREW_CHECK(w.size() == 4, "conv2d: weight must be 4-d [O, C/groups, kh, kw], got shape ", shape_str(w));
  CREW_CHECK(p.groups >= 1, "conv2d: groups must be >= 1, got ", p.groups);
  CREW_CHECK(x[1] == w[1] * p.groups, "conv2d: input has ", x[1], " channels but weight ", shape_str(w),
             " with groups=", p.groups, " expects ", w[1] * p.groups);
  CREW_CHECK(w[0] % p.groups == 0, "conv2d: out channels ", w[0], " not divisible by groups ", p.groups);
  Shape y{x[0], w[0], 0, 0};
  for (int i = 0; i < 2; ++i) {
    CREW_CHECK(p.stride[i] >= 1, "conv2d: stride must be >= 1, got ", p.stride[i]);
    CREW_CHECK(p.dilation[i] >= 1, "conv2d: dilation must be >= 1, got ", p.dilation[i]);
    CREW_CHECK(p.padding[i] >= 0, "conv2d: padding must be >= 0, got ", p.padding[i]);
    const int64_t span = (w[2 + i] - 1) * p.dilation[i] + 1;
    const int64_t padded = x[2 + i] + 2 * p.padding[i];
    CREW_CHECK(padded >= span, "conv2d: kernel extent ", span, " exceeds padded input extent ", padded,
               " (input ", shape_str(x), ", weight ", shape_str(w), ")");
    y[2 + i] = (padded - span) / p.stride[i] + 1;
  }
  return y;
}

// What a forward pass keeps for its backward pass: the input already in the layout of the
// weight-gradient kernel, so that the backward pass does not reorder it a second time.
struct Conv2dSaved {
  dnnl::memory src;  // valid when the forward reordered x into the layout the weight pass wants
};

namespace {

void check_bias(const Tensor& bias, const Tensor& weight) {
  check_dtype(bias, weight.dtype(), "conv2d", "bias");
  CREW_CHECK(bias.numel() == weight.size(0), "conv2d: bias has ", bias.numel(), " elements, expected ",
             weight.size(0));
}

}  // namespace

namespace {

Tensor conv2d_forward_cpu(const Tensor& x, const Tensor& weight, const Tensor& bias, const Conv2dParams& p,
                          std::shared_ptr<const Conv2dSaved>* saved) {
  check_dtype(x, x.dtype(), "conv2d", "input");
  check_dtype(weight, x.dtype(), "conv2d", "weight");
  const bool with_bias = bias.defined();
  if (with_bias) check_bias(bias, weight);
  if (via_float32(x.dtype(), "conv2d")) {
    const Tensor b = with_bias ? to_float32(bias) : bias;
    return conv2d_forward_cpu(to_float32(x), to_float32(weight), b, p, saved).to(x.dtype());
  }
  const ConvGeometry g = geometry(x.shape(), weight.shape(), p, x.dtype());
  Tensor y;
  try {
    auto e = forward_entry(g, with_bias);
    // The output stays in the primitive's layout (blocked): a relu, pool or conv after it
    // reads it as it is, anything else converts it when it reads it.
    y = detail::output_tensor(e->dst, conv2d_output_shape(x.shape(), weight.shape(), p));
    const bool reordered = detail::reorders(e->src, x);
    dnnl::memory src = detail::input_memory(e->src, x);
    // float32 only: a 16-bit parameter is rewritten from its float32 master weight each step.
    if (p.keep_weight_layout && p.groups == 1 && weight.dtype() == DType::FLOAT32 && e->weights.needed &&
        weight_layout_enabled()) {
      detail::adopt_layout(weight, e->weights.wanted);
    }
    dnnl::memory w = detail::input_memory(e->weights, weight);
    std::unordered_map<int, dnnl::memory> args{
        {DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_DST, detail::output_memory(e->dst, y)}};
    if (with_bias) args.emplace(DNNL_ARG_BIAS, detail::as_memory(bias, detail::plain_desc(g.bias, g.dt)));
    detail::execute(e->prim, std::move(args));
    if (saved != nullptr) {
      auto keep = std::make_shared<Conv2dSaved>();
      // Only a reordered copy is worth keeping (x itself is kept by the caller anyway).
      if (reordered && bwd_weights_entry(g, with_bias)->src.wanted == e->src.wanted) keep->src = src;
      *saved = std::move(keep);
    }
  } catch (const dnnl::error& err) {
    detail::rethrow_dnnl("conv2d forward", err);
  }
  return y;
}

}  // namespace

constinit KernelSlot<Conv2dForwardFn> conv2d_forward_kernel("conv2d_forward", &conv2d_forward_cpu);

Tensor conv2d_forward(const Tensor& x, const Tensor& weight, const Tensor& bias, const Conv2dParams& p,
                      std::shared_ptr<const Conv2dSaved>* saved) {
  check_same_place("conv2d", {{"x", &x}, {"weight", &weight}, {"bias", &bias}});
  return conv2d_forward_kernel.get(x.place().type)(x, weight, bias, p, saved);
}

namespace {

std::tuple<Tensor, Tensor, Tensor> conv2d_backward_cpu(const Tensor& grad_y, const Tensor& x,
                                                       const Tensor& weight, const Shape& x_shape,
                                                       const Conv2dParams& p, Conv2dNeeds needs,
                                                       const std::shared_ptr<const Conv2dSaved>& saved,
                                                       const Tensor& into_weight, const Tensor& into_bias);

// The 16-bit backward pass where oneDNN has no kernel for the dtype: float32 on converted
// operands, the gradients rounded once (into the caller's outputs when given).
std::tuple<Tensor, Tensor, Tensor> conv2d_backward_via_float32(const Tensor& grad_y, const Tensor& x,
                                                               const Tensor& weight, const Shape& x_shape,
                                                               const Conv2dParams& p, Conv2dNeeds needs,
                                                               const Tensor& into_weight,
                                                               const Tensor& into_bias) {
  const DType dtype = grad_y.dtype();
  auto f32 = [](const Tensor& t) { return t.defined() ? to_float32(t) : t; };
  auto [gx, gw, gb] = conv2d_backward_cpu(f32(grad_y), f32(x), f32(weight), x_shape, p, needs, nullptr,
                                          f32(into_weight), f32(into_bias));
  auto back = [&](const Tensor& t, const Tensor& into) {
    if (!t.defined()) return t;
    if (!into.defined()) return t.to(dtype);
    Tensor(into).copy_(t.to(dtype));
    return into;
  };
  return {back(gx, Tensor()), back(gw, into_weight), back(gb, into_bias)};
}

std::tuple<Tensor, Tensor, Tensor> conv2d_backward_cpu(const Tensor& grad_y, const Tensor& x,
                                                       const Tensor& weight, const Shape& x_shape,
                                                       const Conv2dParams& p, Conv2dNeeds needs,
                                                       const std::shared_ptr<const Conv2dSaved>& saved,
                                                       const Tensor& into_weight, const Tensor& into_bias) {
  const bool into = into_weight.defined();
  const DType dtype = grad_y.dtype();
  check_dtype(grad_y, dtype, "conv2d backward", "grad_output");
  if (via_float32(dtype, "conv2d backward")) {
    return conv2d_backward_via_float32(grad_y, x, weight, x_shape, p, needs, into_weight, into_bias);
  }
  Conv2dGrads r;
  if (needs.data) check_dtype(weight, dtype, "conv2d backward", "weight");
  if (needs.weights) {
    check_dtype(x, dtype, "conv2d backward", "input");
    CREW_CHECK(x.shape() == x_shape, "conv2d backward: input ", shape_str(x.shape()), " does not match ",
               shape_str(x_shape));
    if (into) check_dtype(into_weight, dtype, "conv2d backward", "grad_weight");
    r.grad_weight = into_weight;  // else made by the weight pass below, in the layout it writes
    r.grad_bias = into ? into_bias : needs.bias ? Tensor::uninitialized({weight.size(0)}, dtype) : Tensor();
  }
  const Shape& w_shape = needs.weights && into ? into_weight.shape() : weight.shape();
  const ConvGeometry g = geometry(x_shape, w_shape, p, dtype);
  CREW_CHECK(grad_y.shape() == conv2d_output_shape(x_shape, w_shape, p),
             "conv2d backward: grad_output shape ", shape_str(grad_y.shape()), " does not match the output");
  try {
    // grad_y in the weight pass's layout, shared with the data pass when both want the same.
    std::shared_ptr<BackwardWeightsEntry> ew;
    dnnl::memory dd_w;
    if (needs.weights) {
      const bool with_bias = r.grad_bias.defined();
      ew = bwd_weights_entry(g, with_bias);
      const bool keep = saved != nullptr && saved->src && saved->src.get_desc() == ew->src.wanted;
      dnnl::memory src = keep ? saved->src : detail::input_memory(ew->src, x);
      dd_w = detail::input_memory(ew->diff_dst, grad_y);
      // A weight kept in the layout this pass writes its gradient in gets its gradient so.
      const detail::DnnlLayout* wl = detail::dnnl_layout_of(weight);
      const bool blocked_grad =
          !into && wl != nullptr && ew->diff_weights.needed && wl->desc() == ew->diff_weights.wanted;
      if (!into) {
        r.grad_weight = blocked_grad ? detail::output_tensor(ew->diff_weights, weight.shape())
                                     : Tensor::uninitialized(weight.shape(), dtype);
      }
      dnnl::memory dw = blocked_grad ? detail::output_memory(ew->diff_weights, r.grad_weight)
                                     : detail::bridge_output_buffer(ew->diff_weights, r.grad_weight);
      std::unordered_map<int, dnnl::memory> args{
          {DNNL_ARG_SRC, src}, {DNNL_ARG_DIFF_DST, dd_w}, {DNNL_ARG_DIFF_WEIGHTS, dw}};
      if (with_bias)
        args.emplace(DNNL_ARG_DIFF_BIAS, detail::as_memory(r.grad_bias, detail::plain_desc(g.bias, g.dt)));
      detail::execute(ew->prim, std::move(args));
      if (!blocked_grad) detail::bridge_output(ew->diff_weights, dw, r.grad_weight);
    }
    if (needs.data) {
      auto ed = bwd_data_entry(g);
      const bool share = ew && ew->diff_dst.wanted == ed->diff_dst.wanted;
      dnnl::memory dd = share ? dd_w : detail::input_memory(ed->diff_dst, grad_y);
      dnnl::memory w = detail::input_memory(ed->weights, weight);
      r.grad_x = detail::output_tensor(ed->diff_src, x_shape);  // in the layout the primitive writes
      detail::execute(ed->prim, {{DNNL_ARG_DIFF_DST, dd},
                                 {DNNL_ARG_WEIGHTS, w},
                                 {DNNL_ARG_DIFF_SRC, detail::output_memory(ed->diff_src, r.grad_x)}});
    }
  } catch (const dnnl::error& err) {
    detail::rethrow_dnnl("conv2d backward", err);
  }
  return {r.grad_x, r.grad_weight, r.grad_bias};
}

}  // namespace

constinit KernelSlot<Conv2dBackwardFn> conv2d_backward_kernel("conv2d_backward", &conv2d_backward_cpu);

Tensor conv2d_backward_data(const Tensor& grad_y, const Tensor& weight, const Shape& x_shape,
                            const Conv2dParams& p) {
  return conv2d_backward(grad_y, Tensor(), weight, x_shape, p, {.data = true, .weights = false}).grad_x;
}

void conv2d_backward_weights(const Tensor& grad_y, const Tensor& x, const Conv2dParams& p,
                             const Tensor& grad_weight, const Tensor& grad_bias) {
  Conv2dGradOutputs out{.grad_weight = grad_weight, .grad_bias = grad_bias};
  conv2d_backward(grad_y, x, Tensor(), x.shape(), p, {.data = false, .weights = true}, nullptr, &out);
}

Conv2dGrads conv2d_backward(const Tensor& grad_y, const Tensor& x, const Tensor& weight, const Shape& x_shape,
                            const Conv2dParams& p, Conv2dNeeds needs,
                            const std::shared_ptr<const Conv2dSaved>& saved, const Conv2dGradOutputs* into) {
  const Tensor none;
  const Tensor& into_weight = into ? into->grad_weight : none;
  const Tensor& into_bias = into ? into->grad_bias : none;
  check_same_place("conv2d backward",
                   {{"grad_y", &grad_y}, {"x", &x}, {"weight", &weight}, {"grad_weight", &into_weight}});
  Conv2dGrads r;
  std::tie(r.grad_x, r.grad_weight, r.grad_bias) = conv2d_backward_kernel.get(grad_y.place().type)(
      grad_y, x, weight, x_shape, p, needs, saved, into_weight, into_bias);
  return r;
}

}  // namespace crew::kernels
