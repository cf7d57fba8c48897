#pragma once
// One layer of a recurrent net as a differentiable op (Paddle's SimpleRNN, LSTM and GRU
// layers are stacks of these): the forward and backward run on oneDNN's RNN primitives
// (crew/tensor/kernels/rnn.h), weights in Paddle's layout and gate order.
#include <vector>

#include "crew/tensor/kernels/rnn.h"
#include "crew/tensor/tensor.h"

namespace crew::nn::functional {

struct RnnLayerOutput {
  Tensor y;    // [T, N, D*H] ([N, T, D*H] batch-major), the directions' outputs concatenated (forward first)
  Tensor h_n;  // [D, N, H]
  Tensor c_n;  // [D, N, H] (LSTM), else undefined
};

// x [T, N, I] (time-major, float32; [N, T, I] with batch_major); weights: weight_ih [G*H, I], weight_hh [G*H,
// H], bias_ih, bias_hh [G*H] (or undefined) per direction, forward first; h0, c0 [D, N, H] or undefined
// (zeros). With `reverse` (one direction) the layer runs from the last step to the first.
// One graph node for the three outputs; gradients reach x, h0, c0 and the weights.
RnnLayerOutput rnn_layer(const Tensor& x, const std::vector<Tensor>& weights, const Tensor& h0,
                         const Tensor& c0, kernels::RnnCell cell, bool bidirectional, bool reverse = false,
                         bool batch_major = false);

}  // namespace crew::nn::functional
