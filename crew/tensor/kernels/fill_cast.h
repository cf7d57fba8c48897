#pragma once
// The kernels behind Tensor's own element loops: fill_ and the dtype conversion of to(DType).
// A device backend sets its entries (crew/tensor/kernels/dispatch.h).
#include "crew/tensor/kernels/dispatch.h"
#include "crew/tensor/tensor.h"

namespace crew::kernels {

// Sets every element of `t` to `value` converted to t's dtype.
using FillFn = void(const Tensor& t, double value);
// Writes `src` converted to dst's dtype into `dst` (same numel and place, contiguous).
using CastFn = void(const Tensor& src, const Tensor& dst);

extern KernelSlot<FillFn> fill_kernel;
extern KernelSlot<CastFn> cast_kernel;

}  // namespace crew::kernels
