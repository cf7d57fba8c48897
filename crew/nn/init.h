#pragma once
// Parameter initialisers (Paddle's paddle.nn.initializer), filling a float tensor in place
// from crew::default_generator() unless given a Generator.
//
//   Tensor w = Tensor::empty({784, 64});
//   crew::nn::init::xavier_uniform_(w);        // Paddle's default for Linear weights
#include <utility>

#include "crew/tensor/random.h"
#include "crew/tensor/tensor.h"

namespace crew::nn::init {

// (fan_in, fan_out) as Paddle computes them: a 2-D weight is [in, out] (Paddle's Linear
// layout); a conv weight [out, in, k...] has fan_in = in * prod(k), fan_out = out * prod(k).
// A 1-D tensor has fan_in = fan_out = its size. ValueError for a scalar.
std::pair<int64_t, int64_t> compute_fans(const Shape& shape);

void constant_(Tensor& t, double value);
void uniform_(Tensor& t, double low, double high, Generator* gen = nullptr);
void normal_(Tensor& t, double mean, double stddev, Generator* gen = nullptr);
// U(-a, a), a = gain * sqrt(6 / (fan_in + fan_out)).
void xavier_uniform_(Tensor& t, double gain = 1.0, Generator* gen = nullptr);
// N(0, s), s = gain * sqrt(2 / (fan_in + fan_out)).
void xavier_normal_(Tensor& t, double gain = 1.0, Generator* gen = nullptr);
// U(-b, b), b = sqrt(6 / ((1 + a^2) * fan_in)); a is the leaky-ReLU slope (0 for ReLU).
void kaiming_uniform_(Tensor& t, double a = 0.0, Generator* gen = nullptr);
// N(0, s), s = sqrt(2 / ((1 + a^2) * fan_in)).
void kaiming_normal_(Tensor& t, double a = 0.0, Generator* gen = nullptr);

}  // namespace crew::nn::init
