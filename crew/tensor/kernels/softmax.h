#pragma once
// softmax and log_softmax along any axis of float32 / float64 tensors (numerically stable:
// the line maximum is subtracted). crew::nn::functional::softmax / log_softmax wrap them.
#include <cstdint>

#include "crew/tensor/kernels/dispatch.h"
#include "crew/tensor/tensor.h"

namespace crew::kernels {

// y = softmax(x) (or log_softmax with log_out) along `axis` (already normalised to [0, dim)).
Tensor softmax_forward(const Tensor& x, int64_t axis, bool log_out);
// softmax: gx = y * (g - sum(g * y)); log_softmax: gx = g - exp(y) * sum(g), along `axis`.
Tensor softmax_backward(const Tensor& grad_y, const Tensor& y, int64_t axis, bool log_out);

using SoftmaxForwardFn = Tensor(const Tensor& x, int64_t axis, bool log_out);
using SoftmaxBackwardFn = Tensor(const Tensor& grad_y, const Tensor& y, int64_t axis, bool log_out);
extern KernelSlot<SoftmaxForwardFn> softmax_forward_kernel;
extern KernelSlot<SoftmaxBackwardFn> softmax_backward_kernel;

}  // namespace crew::kernels
