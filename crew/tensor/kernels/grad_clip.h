#pragma once
// The kernels of gradient clipping (crew/optim/grad_clip.h): a squared norm, and in-place
// scaling and clamping of a float32/float64 gradient on its own place.
#include "crew/tensor/kernels/dispatch.h"
#include "crew/tensor/tensor.h"

namespace crew::kernels {

// Sum of g's squares, accumulated in double in a fixed order (the same on every machine).
double squared_norm(const Tensor& g);
// g *= factor (rounded to g's dtype), in place.
void scale_(const Tensor& g, double factor);
// g = clamp(g, lo, hi) (bounds rounded to g's dtype), in place.
void clamp_(const Tensor& g, double lo, double hi);

using SquaredNormFn = double(const Tensor& g);
using ScaleFn = void(const Tensor& g, double factor);
using ClampFn = void(const Tensor& g, double lo, double hi);
extern KernelSlot<SquaredNormFn> squared_norm_kernel;
extern KernelSlot<ScaleFn> scale_kernel;
extern KernelSlot<ClampFn> clamp_kernel;

}  // namespace crew::kernels
