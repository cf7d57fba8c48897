#pragma once
// Element-wise reduction kernels for Gloo (internal to the gloo backend):
// fn(c, a, b, n) sets c[i] = a[i] op b[i]; c may alias a.
#include <cstddef>
#include <functional>

#include "crew/distributed/process_group/process_group.h"
#include "crew/tensor/dtype.h"

namespace crew::dist::detail {

using GlooReduceFn = std::function<void(void*, const void*, const void*, size_t)>;

// The kernel for op on dtype. AVG reduces as SUM; the caller divides afterwards. bfloat16 and
// float16 compute in float32, rounding each result (half_reduce.h).
GlooReduceFn gloo_reduce_fn(ReduceOp op, DType dtype);

// Divides every element by `divisor` in place (integer division for integer dtypes).
void divide_in_place(Tensor& tensor, int divisor);

}  // namespace crew::dist::detail
