#pragma once
// Paddle's recurrent layers in C++: SimpleRNN, LSTM, GRU. Each layer of the stack is one
// oneDNN RNN primitive (crew::nn::functional::rnn_layer, float32); parameters carry Paddle's
// flat names and layouts, weight_ih_l{k} [G*H, I], weight_hh_l{k} [G*H, H], bias_ih_l{k},
// bias_hh_l{k} [G*H], "_reverse" for the backward direction. (Python's layers also list the
// same tensors under their cells, "0.cell.weight_ih", as Paddle's state_dict does.)
//
//   LSTM lstm(16, 32, {.num_layers = 2, .bidirectional = true});
//   auto out = lstm.run(x);           // x [N, T, 16] -> out.y [N, T, 64], out.h_n [4, N, 32]
#include <cstdint>

#include "crew/nn/functional_rnn.h"
#include "crew/nn/layer.h"

namespace crew::nn {

struct RnnOptions {
  int64_t num_layers = 1;
  bool bidirectional = false;  // Paddle's direction="bidirect"
  bool time_major = false;     // x [T, N, I] instead of [N, T, I]
  double dropout = 0.0;        // on each layer's input but the first, in training
  bool bias = true;            // false: no bias_ih / bias_hh (Paddle's bias_*_attr=False)
};

class RNNBase : public Layer {
 public:
  struct Output {
    Tensor y;    // [N, T, D*H] ([T, N, D*H] time-major)
    Tensor h_n;  // [L*D, N, H], layer-major, forward direction first
    Tensor c_n;  // LSTM only
  };
  // Initial states [L*D, N, H] or undefined (zeros).
  Output run(const Tensor& x, const Tensor& h0 = Tensor(), const Tensor& c0 = Tensor());
  // The outputs alone.
  Tensor forward(const Tensor& x) override { return run(x).y; }

  int64_t input_size() const { return input_size_; }
  int64_t hidden_size() const { return hidden_size_; }
  const RnnOptions& options() const { return opt_; }

 protected:
  // Weights drawn from U(-1/sqrt(H), 1/sqrt(H)) as Paddle's.
  RNNBase(const char* name, kernels::RnnCell cell, int64_t input_size, int64_t hidden_size, RnnOptions opt);

 private:
  kernels::RnnCell cell_;
  int64_t input_size_, hidden_size_;
  RnnOptions opt_;
  std::vector<Tensor> weights_;  // per layer and direction: weight_ih, weight_hh, bias_ih, bias_hh
};

class SimpleRNN : public RNNBase {
 public:
  // activation "tanh" or "relu".
  SimpleRNN(int64_t input_size, int64_t hidden_size, RnnOptions opt = {},
            const std::string& activation = "tanh");
};

class LSTM : public RNNBase {
 public:
  LSTM(int64_t input_size, int64_t hidden_size, RnnOptions opt = {});
};

class GRU : public RNNBase {
 public:
  GRU(int64_t input_size, int64_t hidden_size, RnnOptions opt = {});
};

}  // namespace crew::nn
