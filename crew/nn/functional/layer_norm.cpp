// layer_norm over the trailing normalized_shape axes (crew/tensor/kernels/layer_norm).
#include "crew/tensor/kernels/layer_norm.h"

#include "crew/autograd/autocast.h"
#include "crew/autograd/function.h"
#include "crew/autograd/ops_cast.h"
#include "crew/nn/functional.h"
#include "crew/tensor/kernels/broadcast.h"
#include "crew/tensor/kernels/low_precision.h"

namespace crew::nn::functional {
namespace {

void check_layer_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight,
                      const Tensor& bias) {
  kernels::check_floating_or_half(x, "layer_norm");
  // 16-bit x takes float32 gamma/beta (Paddle's O2 keeps norm parameters in float32).
  const DType param_dtype = is_low_precision(x.dtype()) ? DType::FLOAT32 : x.dtype();
  const int64_t nd = static_cast<int64_t>(normalized_shape.size());
  bool ok = nd >= 1 && x.dim() >= nd;
  for (int64_t d = 0; ok && d < nd; ++d) ok = x.shape()[x.dim() - nd + d] == normalized_shape[d];
  CREW_CHECK(ok, "layer_norm: normalized_shape ", shape_str(normalized_shape),
             " is not the trailing shape of x ", shape_str(x.shape()));
  for (const Tensor* p : {&weight, &bias}) {
    if (!p->defined()) continue;
    CREW_CHECK(p->shape() == normalized_shape && p->dtype() == param_dtype,
               "layer_norm: ", p == &weight ? "weight" : "bias", " of shape ", shape_str(p->shape()),
               " and dtype ", dtype_name(p->dtype()), " does not match normalized_shape ",
               shape_str(normalized_shape), " (", dtype_name(param_dtype), ")");
  }
}

// Under O2 a bfloat16 activation runs the bfloat16 kernel (float32 statistics, gamma and beta)
// instead of a round trip through float32; O1, an explicit custom_black_list entry and CPUs
// without bf16 primitives keep autocast's float32.
bool o2_keeps_bfloat16(const Tensor& x) {
  const amp::AutocastOptions& s = amp::autocast_state();
  if (!amp::autocast_enabled() || s.level != amp::AmpLevel::O2 || x.dtype() != DType::BFLOAT16) return false;
  if (s.custom_black_list.count("layer_norm") != 0) return false;
  return kernels::dnnl_supports(DType::BFLOAT16, "layer_norm");
}

Tensor float32_param(const Tensor& p) {
  return p.defined() && is_low_precision(p.dtype()) ? cast(p, DType::FLOAT32) : p;
}

}  // namespace

Tensor layer_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight, const Tensor& bias,
                  double epsilon) {
  if (o2_keeps_bfloat16(x)) {
    const Tensor w32 = float32_param(weight), b32 = float32_param(bias);
    amp::AutocastGuard off(amp::autocast_off());
    return layer_norm(x, normalized_shape, w32, b32, epsilon);
  }
  if (auto in = amp::autocast_operands("layer_norm", x, weight, bias)) {
    return layer_norm((*in)[0], normalized_shape, (*in)[1], (*in)[2], epsilon);
  }
  check_layer_norm(x, normalized_shape, weight, bias);
  const int64_t cols = shape_numel(normalized_shape);
  const int64_t rows = cols == 0 ? 0 : x.numel() / cols;
  kernels::LayerNormStats stats;
  Tensor y = kernels::layer_norm_forward(x, rows, cols, weight, bias, epsilon, stats);
  if (autograd::should_record({&x, &weight, &bias})) {
    autograd::record(y, "layer_norm", {x, weight, bias},
                     [x = x.detach(), w = weight.defined() ? weight.detach() : Tensor(),
                      b = bias.defined() ? bias.detach() : Tensor(), rows, cols, epsilon, stats,
                      normalized_shape](const Tensor& g, const std::vector<bool>&) {
                       kernels::LayerNormGrads gr =
                           kernels::layer_norm_backward(g, x, rows, cols, w, b, epsilon, stats);
                       if (gr.weight.defined()) gr.weight = gr.weight.view(normalized_shape);
                       if (gr.bias.defined()) gr.bias = gr.bias.view(normalized_shape);
                       return std::vector<Tensor>{gr.x, gr.weight, gr.bias};
                     },
                     {x, weight, bias});
  }
  return y;
}

}  // namespace crew::nn::functional
