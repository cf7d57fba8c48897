#pragma once
// Elementwise activations: float32 on oneDNN eltwise primitives (cached per size),
// float64 on plain loops (used by gradient checks).
#include "crew/tensor/tensor.h"

namespace crew::ops {

enum class Activation { RELU, SIGMOID, TANH, GELU_ERF, GELU_TANH };

Tensor activation_forward(Activation kind, const Tensor& x);
// d loss / d x from grad_y; `x` is the forward input, `y` its output (either may be used).
Tensor activation_backward(Activation kind, const Tensor& grad_y, const Tensor& x, const Tensor& y);

}  // namespace crew::ops
