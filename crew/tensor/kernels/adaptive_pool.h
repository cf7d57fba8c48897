#pragma once
// 2-d adaptive average pooling of float32 / float64 [N, C, H, W] to [N, C, OH, OW] with
// Paddle's/PyTorch's bins: start = floor(i * H / OH), end = ceil((i + 1) * H / OH).
// crew::nn::functional::adaptive_avg_pool2d wraps these.
#include <cstdint>

#include "crew/tensor/kernels/dispatch.h"
#include "crew/tensor/tensor.h"

namespace crew::kernels {

// x [N, C, H, W] (validated by the caller) -> [N, C, oh, ow].
Tensor adaptive_avg_pool2d_forward(const Tensor& x, int64_t oh, int64_t ow);
// d loss / d x [x_shape] from grad_y [N, C, oh, ow].
Tensor adaptive_avg_pool2d_backward(const Tensor& grad_y, const Shape& x_shape);

using AdaptiveAvgPool2dForwardFn = Tensor(const Tensor& x, int64_t oh, int64_t ow);
using AdaptiveAvgPool2dBackwardFn = Tensor(const Tensor& grad_y, const Shape& x_shape);
extern KernelSlot<AdaptiveAvgPool2dForwardFn> adaptive_avg_pool2d_forward_kernel;
extern KernelSlot<AdaptiveAvgPool2dBackwardFn> adaptive_avg_pool2d_backward_kernel;

}  // namespace crew::kernels
