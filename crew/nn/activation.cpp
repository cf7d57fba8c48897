#include "crew/nn/activation.h"

#include "crew/nn/functional.h"

namespace crew::nn {

Tensor ReLU::forward(const Tensor& x) { return functional::relu(x); }
Tensor Sigmoid::forward(const Tensor& x) { return functional::sigmoid(x); }
Tensor Tanh::forward(const Tensor& x) { return functional::tanh(x); }
Tensor GELU::forward(const Tensor& x) { return functional::gelu(x, approximate_); }
Tensor Softmax::forward(const Tensor& x) { return functional::softmax(x, axis_); }

}  // namespace crew::nn
