#pragma once
// The kernel of the loss scaler (Paddle's check_finite_and_unscale, crew.amp.GradScaler):
// divides a gradient by the loss scale in place and says whether it held an inf or a NaN.
#include "crew/tensor/kernels/dispatch.h"
#include "crew/tensor/tensor.h"

namespace crew::kernels {

// g *= inv_scale in place (float32, float64, bfloat16 or float16; 16-bit values computed in
// float32 and rounded once). Returns true when any element of g was inf or NaN before the
// scaling (then g's values are unspecified: the step that reads them is skipped).
bool unscale_and_check_finite_(const Tensor& g, double inv_scale);

using UnscaleCheckFn = bool(const Tensor& g, double inv_scale);
extern KernelSlot<UnscaleCheckFn> unscale_and_check_finite_kernel;

}  // namespace crew::kernels
