#pragma once
// cast: Paddle's paddle.cast / Tensor.astype, differentiable between floating dtypes (the
// gradient is cast back to the input's dtype), so that a float32 master weight can feed a
// bfloat16 op and receive a float32 gradient.
//
//   Tensor w16 = crew::cast(w, DType::BFLOAT16);   // w float32, stop_gradient = false
//   crew::nn::functional::linear(x16, w16, b16).backward(g16);
//   w.grad();                                       // float32
#include "crew/tensor/tensor.h"

namespace crew {

// x converted to `dtype` (rounded to nearest even into a 16-bit float); x itself when the dtype
// is the same. Records a backward when both dtypes are floating and x requires grad.
Tensor cast(const Tensor& x, DType dtype);

}  // namespace crew
