// One recurrent layer (crew/tensor/kernels/rnn) with autograd: y, h_n and c_n are views of
// one packed output, so that one node owns the kernel's workspace.
#include "crew/autograd/function.h"
#include "crew/autograd/ops.h"
#include "crew/nn/functional_rnn.h"

namespace crew::nn::functional {

RnnLayerOutput rnn_layer(const Tensor& x, const std::vector<Tensor>& weights, const Tensor& h0,
                         const Tensor& c0, kernels::RnnCell cell, bool bidirectional, bool reverse,
                         bool batch_major) {
  std::vector<Tensor> inputs{x, h0, c0};
  inputs.insert(inputs.end(), weights.begin(), weights.end());
  const bool record = autograd::should_record(inputs);
  const kernels::RnnLayerParams p{
      .cell = cell, .bidirectional = bidirectional, .reverse = reverse, .batch_major = batch_major};
  kernels::RnnForwardResult r = kernels::rnn_layer_forward(x, weights, h0, c0, p, record);
  if (!record) return {r.y, r.h_n, r.c_n};

  const int64_t ny = r.y.numel(), nh = r.h_n.numel(), nc = r.c_n.defined() ? r.c_n.numel() : 0;
  const Shape y_shape = r.y.shape(), s_shape = r.h_n.shape();
  Tensor packed = Tensor::uninitialized({ny + nh + nc}, r.y.dtype(), r.y.place());
  packed.slice(0, ny).copy_(r.y);
  packed.slice(ny, ny + nh).copy_(r.h_n);
  if (nc > 0) packed.slice(ny + nh, ny + nh + nc).copy_(r.c_n);
  autograd::record(
      packed, "rnn", inputs,
      [saved = r.saved, ny, nh, nc, y_shape, s_shape](const Tensor& g, const std::vector<bool>&) {
        const Tensor dy = g.slice(0, ny).view(y_shape);
        const Tensor dh = g.slice(ny, ny + nh).view(s_shape);
        const Tensor dc = nc > 0 ? g.slice(ny + nh, ny + nh + nc).view(s_shape) : Tensor();
        kernels::RnnGrads gr = kernels::rnn_layer_backward(dy, dh, dc, *saved);
        std::vector<Tensor> out{gr.x, gr.h0, gr.c0};
        out.insert(out.end(), gr.weights.begin(), gr.weights.end());
        return out;
      },
      inputs);
  RnnLayerOutput o;
  o.y = crew::reshape(crew::slice(packed, 0, 0, ny), y_shape);
  o.h_n = crew::reshape(crew::slice(packed, 0, ny, ny + nh), s_shape);
  if (nc > 0) o.c_n = crew::reshape(crew::slice(packed, 0, ny + nh, ny + nh + nc), s_shape);
  return o;
}

}  // namespace crew::nn::functional
