#pragma once
// 2-d resampling of NCHW float32 tensors on oneDNN's resampling primitives (cached per
// shape): NEAREST reads source row floor((o + 0.5) in / out) and LINEAR is half-pixel
// bilinear (source (o + 0.5) in / out - 0.5, borders clamped). These equal Paddle's
// interpolate for nearest with an integer upscale and for bilinear with align_corners=False,
// align_mode=0; crew.nn.functional.interpolate sends only those cases here.
#include <array>
#include <cstdint>

#include "crew/tensor/kernels/dispatch.h"
#include "crew/tensor/tensor.h"

namespace crew::kernels {

enum class ResampleMode { NEAREST, LINEAR };

// x [N, C, H, W] -> [N, C, out[0], out[1]].
Tensor resample2d_forward(ResampleMode mode, const Tensor& x, std::array<int64_t, 2> out);
// d loss / d x [x_shape] from grad_y [N, C, out[0], out[1]].
Tensor resample2d_backward(ResampleMode mode, const Tensor& grad_y, const Shape& x_shape);

using Resample2dForwardFn = Tensor(ResampleMode mode, const Tensor& x, std::array<int64_t, 2> out);
using Resample2dBackwardFn = Tensor(ResampleMode mode, const Tensor& grad_y, const Shape& x_shape);
extern KernelSlot<Resample2dForwardFn> resample2d_forward_kernel;
extern KernelSlot<Resample2dBackwardFn> resample2d_backward_kernel;

}  // namespace crew::kernels
