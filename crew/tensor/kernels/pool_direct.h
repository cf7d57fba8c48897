#pragma once
// Direct pooling kernels on plain NCHW float32 (no reorders), used by pool2d_forward /
// pool2d_backward by default: on the seed net they are several times faster than oneDNN
// 2.6's pooling, which needs two reorders around its blocked-layout kernel (docs/kernels.md).
#include "crew/tensor/kernels/pool.h"

namespace crew::kernels::detail {

// y [N, C, OH, OW] preallocated; for MAX, argmax (int32, same shape as y) receives the flat
// index within each HxW plane of the chosen element (the first maximum in row-major order).
void pool2d_direct_forward(PoolKind kind, const Tensor& x, const Pool2dParams& p, const Tensor& y,
                           const Tensor& argmax);
// grad_x [N, C, H, W] preallocated, any contents: every element is written.
void pool2d_direct_backward(PoolKind kind, const Tensor& grad_y, const Tensor& argmax, const Pool2dParams& p,
                            const Tensor& grad_x);

}  // namespace crew::kernels::detail
