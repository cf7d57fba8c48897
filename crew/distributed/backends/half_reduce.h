#pragma once
// Element-wise reductions of bfloat16 and float16 for the collective backends (internal):
// each pair of elements is widened to float32, combined there and rounded once to nearest
// even (per-op float32 upcast), so a sum of two ranks' gradients is as exact as the 16-bit
// format allows and AVG divides in float32. The shm and Gloo kernels (shm_reduce.h,
// gloo_reduce.h) hand their 16-bit dtypes here.
#include <cstdint>

#include "crew/distributed/process_group/process_group.h"
#include "crew/tensor/dtype.h"

namespace crew::dist::detail {

// dst[i] = a[i] op b[i] for n elements of `dtype` (bfloat16 or float16); AVG combines as SUM.
// dst may equal a or b, no other overlap.
void half_reduce_pair(void* dst, const void* a, const void* b, int64_t n, DType dtype, ReduceOp op);
// dst[i] = dst[i] / divisor, computed in float32 and rounded (the last step of AVG).
void half_divide(void* dst, int64_t n, DType dtype, int divisor);

}  // namespace crew::dist::detail
