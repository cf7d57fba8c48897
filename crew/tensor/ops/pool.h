#pragma once
// 2-d max / average pooling kernels on oneDNN (float32, NCHW), cached per configuration.
// Average pooling excludes padding from the divisor (Paddle's exclusive=True default).
#include <array>
#include <cstdint>

#include "crew/tensor/tensor.h"

namespace crew::ops {

enum class PoolKind { MAX, AVG };

struct Pool2dParams {
  std::array<int64_t, 2> kernel{2, 2};
  std::array<int64_t, 2> stride{2, 2};
  std::array<int64_t, 2> padding{0, 0};
};

// Validates x [N, C, H, W]; returns [N, C, (H + 2p - k) / s + 1, ...].
Shape pool2d_output_shape(const Shape& x, const Pool2dParams& p);

struct PoolForwardResult {
  Tensor y;
  Tensor workspace;  // max pooling: argmax positions for backward (opaque uint8 bytes)
};

// with_workspace: keep what backward needs (training).
PoolForwardResult pool2d_forward(PoolKind kind, const Tensor& x, const Pool2dParams& p, bool with_workspace);
// d loss / d x; `workspace` from the forward call (max pooling only).
Tensor pool2d_backward(PoolKind kind, const Tensor& grad_y, const Shape& x_shape, const Tensor& workspace,
                       const Pool2dParams& p);

}  // namespace crew::ops
