// layer_norm over the trailing normalized_shape axes (crew/tensor/kernels/layer_norm).
#include "crew/tensor/kernels/layer_norm.h"

#include "crew/autograd/autocast.h"
#include "crew/autograd/function.h"
#include "crew/nn/functional.h"
#include "crew/tensor/kernels/broadcast.h"

namespace crew::nn::functional {
namespace {

void check_layer_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight,
                      const Tensor& bias) {
  kernels::check_floating(x, "layer_norm");
  const int64_t nd = static_cast<int64_t>(normalized_shape.size());
  bool ok = nd >= 1 && x.dim() >= nd;
  for (int64_t d = 0; ok && d < nd; ++d) ok = x.shape()[x.dim() - nd + d] == normalized_shape[d];
  CREW_CHECK(ok, "layer_norm: normalized_shape ", shape_str(normalized_shape),
             " is not the trailing shape of x ", shape_str(x.shape()));
  for (const Tensor* p : {&weight, &bias}) {
    if (!p->defined()) continue;
    CREW_CHECK(p->shape() == normalized_shape && p->dtype() == x.dtype(),
               "layer_norm: ", p == &weight ? "weight" : "bias", " of shape ", shape_str(p->shape()),
               " and dtype ", dtype_name(p->dtype()), " does not match normalized_shape ",
               shape_str(normalized_shape), " (", dtype_name(x.dtype()), ")");
  }
}

}  // namespace

Tensor layer_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight, const Tensor& bias,
                  double epsilon) {
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
