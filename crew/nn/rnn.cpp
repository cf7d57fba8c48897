#include "crew/nn/rnn.h"

#include <cmath>

#include "crew/autograd/ops.h"
#include "crew/core/check.h"
#include "crew/nn/functional.h"
#include "crew/nn/init.h"

namespace crew::nn {

namespace {

kernels::RnnCell simple_rnn_cell(const std::string& activation) {
  CREW_CHECK(activation == "tanh" || activation == "relu",
             "SimpleRNN: activation must be 'tanh' or 'relu', got '", activation, "'");
  return activation == "tanh" ? kernels::RnnCell::RNN_TANH : kernels::RnnCell::RNN_RELU;
}

}  // namespace

RNNBase::RNNBase(const char* name, kernels::RnnCell cell, int64_t input_size, int64_t hidden_size,
                 RnnOptions opt)
    : Layer(name), cell_(cell), input_size_(input_size), hidden_size_(hidden_size), opt_(opt) {
  CREW_CHECK(input_size > 0 && hidden_size > 0, name, ": input_size and hidden_size must be positive, got ",
             input_size, " and ", hidden_size);
  CREW_CHECK(opt.num_layers >= 1, name, ": num_layers must be >= 1, got ", opt.num_layers);
  CREW_CHECK(opt.dropout >= 0.0 && opt.dropout < 1.0, name, ": dropout must be in [0, 1), got ", opt.dropout);
  const int64_t D = opt.bidirectional ? 2 : 1, rows = kernels::rnn_gate_count(cell) * hidden_size;
  const double bound = 1.0 / std::sqrt(static_cast<double>(hidden_size));
  auto make = [&](const Shape& s) {
    Tensor t = Tensor::empty(s);
    init::uniform_(t, -bound, bound);
    return t;
  };
  for (int64_t l = 0; l < opt.num_layers; ++l) {
    const int64_t in = l == 0 ? input_size : D * hidden_size;
    for (int64_t d = 0; d < D; ++d) {
      const std::string sfx = str_cat("_l", l, d == 1 ? "_reverse" : "");
      weights_.push_back(register_parameter("weight_ih" + sfx, make({rows, in})));
      weights_.push_back(register_parameter("weight_hh" + sfx, make({rows, hidden_size})));
      weights_.push_back(opt.bias ? register_parameter("bias_ih" + sfx, make({rows})) : Tensor());
      weights_.push_back(opt.bias ? register_parameter("bias_hh" + sfx, make({rows})) : Tensor());
    }
  }
}

RNNBase::Output RNNBase::run(const Tensor& x, const Tensor& h0, const Tensor& c0) {
  const int64_t D = opt_.bidirectional ? 2 : 1, L = opt_.num_layers;
  CREW_CHECK(x.dim() == 3 && x.size(2) == input_size_, full_name(), ": expected input ",
             opt_.time_major ? "[T, N, " : "[N, T, ", input_size_, "], got ", shape_str(x.shape()));
  const bool lstm = cell_ == kernels::RnnCell::LSTM;
  const Shape state{L * D, x.size(opt_.time_major ? 1 : 0), hidden_size_};
  for (const Tensor* s : {&h0, &c0}) {
    CREW_CHECK(!s->defined() || s->shape() == state, full_name(), ": initial state ", shape_str(s->shape()),
               " is not [num_layers * num_directions, batch, hidden] = ", shape_str(state));
  }
  Output out;
  Tensor y = x;
  std::vector<Tensor> hs, cs;
  for (int64_t l = 0; l < L; ++l) {
    if (l > 0 && opt_.dropout > 0.0 && training()) y = functional::dropout(y, opt_.dropout, true);
    std::vector<Tensor> w(weights_.begin() + 4 * D * l, weights_.begin() + 4 * D * (l + 1));
    const Tensor h = h0.defined() ? crew::slice(h0, 0, l * D, (l + 1) * D) : Tensor();
    const Tensor c = lstm && c0.defined() ? crew::slice(c0, 0, l * D, (l + 1) * D) : Tensor();
    functional::RnnLayerOutput o =
        functional::rnn_layer(y, w, h, c, cell_, opt_.bidirectional, false, !opt_.time_major);
    y = o.y;
    hs.push_back(o.h_n);
    if (lstm) cs.push_back(o.c_n);
  }
  out.y = y;
  out.h_n = L == 1 ? hs[0] : crew::concat(hs, 0);
  if (lstm) out.c_n = L == 1 ? cs[0] : crew::concat(cs, 0);
  return out;
}

SimpleRNN::SimpleRNN(int64_t input_size, int64_t hidden_size, RnnOptions opt, const std::string& activation)
    : RNNBase("simple_rnn", simple_rnn_cell(activation), input_size, hidden_size, opt) {}

LSTM::LSTM(int64_t input_size, int64_t hidden_size, RnnOptions opt)
    : RNNBase("lstm", kernels::RnnCell::LSTM, input_size, hidden_size, opt) {}

GRU::GRU(int64_t input_size, int64_t hidden_size, RnnOptions opt)
    : RNNBase("gru", kernels::RnnCell::GRU, input_size, hidden_size, opt) {}

}  // namespace crew::nn
