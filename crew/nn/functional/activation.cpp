// relu, sigmoid, tanh, gelu (crew/tensor/kernels/activation kernels) and flatten.
#include "crew/tensor/kernels/activation.h"

#include "crew/autograd/function.h"
#include "crew/autograd/ops.h"
#include "crew/nn/functional.h"

namespace crew::nn::functional {
namespace {

Tensor activation(kernels::Activation kind, const char* name, const Tensor& x) {
  Tensor y = kernels::activation_forward(kind, x);
  if (autograd::should_record({&x})) {
    // Keep the input only when the backward reads it: after a conv, its output can then be
    // freed as soon as the activation has run instead of living until backward.
    Tensor saved_x = kernels::activation_backward_uses_output_only(kind) ? Tensor() : x.detach();
    autograd::record(y, name, {x},
                     [kind, saved_x, y = y.detach()](const Tensor& g, const std::vector<bool>&) {
                       return std::vector<Tensor>{
                           kernels::activation_backward(kind, g, saved_x, y, autograd::disposable_grad(g))};
                     },
                     {saved_x, y});
  }
  return y;
}

}  // namespace

Tensor relu(const Tensor& x) { return activation(kernels::Activation::RELU, "relu", x); }
Tensor sigmoid(const Tensor& x) { return activation(kernels::Activation::SIGMOID, "sigmoid", x); }
Tensor tanh(const Tensor& x) { return activation(kernels::Activation::TANH, "tanh", x); }
Tensor gelu(const Tensor& x, bool approximate) {
  return activation(approximate ? kernels::Activation::GELU_TANH : kernels::Activation::GELU_ERF, "gelu", x);
}

Tensor flatten(const Tensor& x, int64_t start_axis, int64_t stop_axis) {
  const int64_t nd = x.dim();
  if (nd == 0) return reshape(x, {1});
  const int64_t a = normalize_axis(start_axis, nd);
  const int64_t b = normalize_axis(stop_axis, nd);
  CREW_CHECK(a <= b, "flatten: start_axis ", start_axis, " is after stop_axis ", stop_axis, " for shape ",
             shape_str(x.shape()));
  Shape s(x.shape().begin(), x.shape().begin() + a);
  int64_t merged = 1;
  for (int64_t d = a; d <= b; ++d) merged *= x.shape()[d];
  s.push_back(merged);
  s.insert(s.end(), x.shape().begin() + b + 1, x.shape().end());
  return reshape(x, s);
}

}  // namespace crew::nn::functional
