#pragma once
// Row softmax over the last axis of a tensor viewed as [rows, cols]: float32 on oneDNN's
// softmax primitives (cached per shape), float64 on plain loops (gradient checks).
#include "crew/tensor/kernels/dispatch.h"
#include "crew/tensor/tensor.h"

namespace crew::kernels {

// x = softmax(x) along the last axis, in place (-inf entries get probability 0).
void softmax_rows_(const Tensor& x);
// The input gradient of y = softmax(x) along the last axis: y * (g - rowsum(g * y)).
Tensor softmax_rows_backward(const Tensor& y, const Tensor& grad_y);

// The slots the two run, on the operands' place.
using SoftmaxRowsFn = void(const Tensor& x);
using SoftmaxRowsBackwardFn = Tensor(const Tensor& y, const Tensor& grad_y);
extern KernelSlot<SoftmaxRowsFn> softmax_rows_kernel;
extern KernelSlot<SoftmaxRowsBackwardFn> softmax_rows_backward_kernel;

}  // namespace crew::kernels
