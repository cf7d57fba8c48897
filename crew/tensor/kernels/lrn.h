#pragma once
// Local response normalisation across channels on oneDNN's lrn primitive (float32, x
// [N, C, H, W], cached per shape and parameters): y = x / (k + alpha / size * sum of x^2 over
// channels c - (size - 1) / 2 .. c + (size - 1) / 2)^beta. That window is Paddle's for an odd
// size; crew.nn.functional.local_response_norm sends even sizes elsewhere.
#include <cstdint>

#include "crew/tensor/kernels/dispatch.h"
#include "crew/tensor/tensor.h"

namespace crew::kernels {

struct LrnParams {
  int64_t size = 5;
  double alpha = 1e-4, beta = 0.75, k = 1.0;
};

struct LrnForwardResult {
  Tensor y;
  Tensor workspace;  // oneDNN's bytes for the backward (may be undefined)
};
LrnForwardResult lrn_forward(const Tensor& x, const LrnParams& p);
// d loss / d x from grad_y, the forward input x and its workspace.
Tensor lrn_backward(const Tensor& grad_y, const Tensor& x, const Tensor& workspace, const LrnParams& p);

using LrnForwardFn = LrnForwardResult(const Tensor& x, const LrnParams& p);
using LrnBackwardFn = Tensor(const Tensor& grad_y, const Tensor& x, const Tensor& workspace,
                             const LrnParams& p);
extern KernelSlot<LrnForwardFn> lrn_forward_kernel;
extern KernelSlot<LrnBackwardFn> lrn_backward_kernel;

}  // namespace crew::kernels
