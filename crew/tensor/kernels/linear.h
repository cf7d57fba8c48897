#pragma once
// The kernels of nn::functional::linear: y = x W + b with W [in, out] (Paddle's layout),
// float32 on one oneDNN matmul with the bias fused, float64 on OpenBLAS gemm.
#include <vector>

#include "crew/tensor/kernels/dispatch.h"
#include "crew/tensor/tensor.h"

namespace crew::kernels {

// Which gradients linear_backward computes.
struct LinearNeeds {
  bool x = true;
  bool weight = true;
  bool bias = true;
};

// y [..., out] = x [..., in] weight [in, out] + bias [out] (bias may be undefined); operands
// validated by the caller (one floating dtype), on one place.
Tensor linear_forward(const Tensor& x, const Tensor& weight, const Tensor& bias);
// {d x, d weight, d bias} for grad_y [..., out]; undefined where not asked for.
std::vector<Tensor> linear_backward(const Tensor& grad_y, const Tensor& x, const Tensor& weight,
                                    LinearNeeds needs);

using LinearForwardFn = Tensor(const Tensor& x, const Tensor& weight, const Tensor& bias);
using LinearBackwardFn = std::vector<Tensor>(const Tensor& grad_y, const Tensor& x, const Tensor& weight,
                                             LinearNeeds needs);
extern KernelSlot<LinearForwardFn> linear_forward_kernel;
extern KernelSlot<LinearBackwardFn> linear_backward_kernel;

}  // namespace crew::kernels
