#pragma once
// 2-d convolution kernels on oneDNN (float32, NCHW), primitives cached per configuration.
// These are plain kernels without autograd; crew::nn::functional::conv2d wraps them.
#include <array>
#include <cstdint>

#include "crew/tensor/tensor.h"

namespace crew::ops {

struct Conv2dParams {
  std::array<int64_t, 2> stride{1, 1};
  std::array<int64_t, 2> padding{0, 0};   // symmetric, per spatial axis
  std::array<int64_t, 2> dilation{1, 1};  // 1 = dense (Paddle's convention)
  int64_t groups = 1;
};

// Validates x [N, C, H, W] and weight [O, C/groups, kh, kw]; returns [N, O, H', W'].
Shape conv2d_output_shape(const Shape& x, const Shape& weight, const Conv2dParams& p);
// y = conv(x, weight) + bias; bias [O] or undefined.
Tensor conv2d_forward(const Tensor& x, const Tensor& weight, const Tensor& bias, const Conv2dParams& p);
// d loss / d x for grad_y [N, O, H', W'].
Tensor conv2d_backward_data(const Tensor& grad_y, const Tensor& weight, const Shape& x_shape,
                            const Conv2dParams& p);
// d loss / d weight into grad_weight (same shape as weight) and, when grad_bias is defined,
// d loss / d bias into grad_bias [O]. Both are overwritten.
void conv2d_backward_weights(const Tensor& grad_y, const Tensor& x, const Conv2dParams& p,
                             const Tensor& grad_weight, const Tensor& grad_bias);

}  // namespace crew::ops
