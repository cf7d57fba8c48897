#pragma once
// Recurrent layers on oneDNN's RNN primitives (float32, training mode with a workspace): one
// layer, one or both directions, of Paddle's SimpleRNN (tanh or relu), LSTM or GRU. Weights
// come and go in Paddle's layout -- per direction weight_ih [G*H, I], weight_hh [G*H, H],
// bias_ih [G*H], bias_hh [G*H], gates in Paddle's order (LSTM i, f, g, o; GRU r, z, c) -- and
// the kernel converts them to oneDNN's (ldigo, GRU gates u, r, o with the "linear before
// reset" bias, which is Paddle's GRU: c = tanh(W_c x + b_ic + r * (U_c h + b_hc))).
// crew::nn::functional::rnn_layer wraps these with autograd.
#include <memory>
#include <vector>

#include "crew/tensor/kernels/dispatch.h"
#include "crew/tensor/tensor.h"

namespace crew::kernels {

enum class RnnCell { RNN_TANH, RNN_RELU, LSTM, GRU };

const char* rnn_cell_name(RnnCell cell);
// Gates per step: 1 (SimpleRNN), 4 (LSTM), 3 (GRU).
int64_t rnn_gate_count(RnnCell cell);

struct RnnLayerParams {
  RnnCell cell = RnnCell::LSTM;
  bool bidirectional = false;  // both directions, outputs concatenated [forward, backward]
  bool reverse = false;        // one direction, right to left (ignored when bidirectional)
  bool batch_major = false;    // x [N, T, I] and y [N, T, D*H] (Paddle's default) instead of [T, N, ...]
};

// What rnn_layer_forward keeps for rnn_layer_backward (opaque; see rnn.cpp).
struct RnnSaved;

struct RnnForwardResult {
  Tensor y;                               // [T, N, D*H] ([N, T, D*H] when batch_major)
  Tensor h_n;                             // [D, N, H]
  Tensor c_n;                             // [D, N, H] for LSTM, else undefined
  std::shared_ptr<const RnnSaved> saved;  // set when training
};

// One layer over x [T, N, I] (time-major; [N, T, I] when batch_major, read as it lies). `weights` holds 4
// tensors per direction (forward first): weight_ih, weight_hh, bias_ih, bias_hh; a bias may be undefined
// (zeros). h0 (and c0 for LSTM) [D, N, H] or undefined (zeros). With `training` the result keeps the
// workspace for rnn_layer_backward.
RnnForwardResult rnn_layer_forward(const Tensor& x, const std::vector<Tensor>& weights, const Tensor& h0,
                                   const Tensor& c0, const RnnLayerParams& p, bool training);
using RnnLayerForwardFn = RnnForwardResult(const Tensor& x, const std::vector<Tensor>& weights,
                                           const Tensor& h0, const Tensor& c0, const RnnLayerParams& p,
                                           bool training);
extern KernelSlot<RnnLayerForwardFn> rnn_layer_forward_kernel;

struct RnnGrads {
  Tensor x, h0, c0;             // c0 for LSTM only
  std::vector<Tensor> weights;  // as rnn_layer_forward's weights (undefined where the bias was)
};

// Gradients for dy (y's shape) and the final states' gradients dh_n, dc_n [D, N, H] (either
// may be undefined: zeros), from the state of a training forward.
RnnGrads rnn_layer_backward(const Tensor& dy, const Tensor& dh_n, const Tensor& dc_n, const RnnSaved& saved);
using RnnLayerBackwardFn = RnnGrads(const Tensor& dy, const Tensor& dh_n, const Tensor& dc_n,
                                    const RnnSaved& saved);
extern KernelSlot<RnnLayerBackwardFn> rnn_layer_backward_kernel;

}  // namespace crew::kernels
