#pragma once
// Element-wise math beyond exp/log/pow (crew/tensor/kernels/elementwise.h): abs, square,
// sign, clip (any numeric dtype), sqrt, rsqrt, sin, cos, tanh, sigmoid, erf, floor (float32 /
// float64), and each one's backward. New tensors on x's place.
#include "crew/tensor/kernels/dispatch.h"
#include "crew/tensor/kernels/math/pointwise.h"
#include "crew/tensor/tensor.h"

namespace crew::kernels {

// f(x) element-wise, same dtype; lo and hi are CLIP's bounds. ValueError naming `name` for a
// bool tensor, or an integer one where op is floating-only.
Tensor pointwise(MathOp op, const Tensor& x, double lo, double hi, const char* name);
// g * f'(x) with y = f(x): x, y, g of one shape and floating dtype.
Tensor pointwise_backward(MathOp op, const Tensor& x, const Tensor& y, const Tensor& g, double lo, double hi);

using PointwiseFn = Tensor(MathOp op, const Tensor& x, double lo, double hi);
using PointwiseBackwardFn = Tensor(MathOp op, const Tensor& x, const Tensor& y, const Tensor& g, double lo,
                                   double hi);
extern KernelSlot<PointwiseFn> pointwise_kernel;
extern KernelSlot<PointwiseBackwardFn> pointwise_backward_kernel;

}  // namespace crew::kernels
