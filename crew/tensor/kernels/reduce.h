#pragma once
// Reductions along one axis: a scaled sum (sum, mean) and argmax. Results are new tensors on
// the input's place.
#include <cstdint>

#include "crew/tensor/kernels/dispatch.h"
#include "crew/tensor/tensor.h"

namespace crew::kernels {

// scale * (sum of x along `axis`), x float32/float64 and axis in [0, x.dim()); the axis is
// kept as extent 1 when keepdim, else removed. Accumulates in x's dtype, in axis order.
Tensor sum_axis(const Tensor& x, int64_t axis, bool keepdim, double scale);
// int64 indices of the first maximum along `axis` (in [0, x.dim()), extent > 0), the axis
// removed.
Tensor argmax(const Tensor& x, int64_t axis);

using SumAxisFn = Tensor(const Tensor& x, int64_t axis, bool keepdim, double scale);
using ArgmaxFn = Tensor(const Tensor& x, int64_t axis);
extern KernelSlot<SumAxisFn> sum_axis_kernel;
extern KernelSlot<ArgmaxFn> argmax_kernel;

}  // namespace crew::kernels
