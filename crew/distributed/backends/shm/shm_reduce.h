#pragma once
// Element-wise reduction kernels of the shm backend (internal). Explicit 256-bit vector code
// (GCC vector extensions), so they vectorise whatever the optimisation level.
#include <cstdint>

#include "crew/distributed/process_group/process_group.h"
#include "crew/tensor/dtype.h"

namespace crew::dist::detail {

// dst[i] = dst[i] op src[i] for i < n. AVG accumulates like SUM (see finish_avg). bfloat16 and
// float16 compute in float32, rounding each result (half_reduce.h).
// dst and src must not overlap.
void reduce_into(void* dst, const void* src, int64_t n, DType dtype, ReduceOp op);
// dst[i] = a[i] op b[i]; dst may equal a or b, no other overlap.
void reduce_pair(void* dst, const void* a, const void* b, int64_t n, DType dtype, ReduceOp op);
// dst[i] /= world (integer division for integer dtypes), the last step of AVG.
void finish_avg(void* dst, int64_t n, DType dtype, int world);

}  // namespace crew::dist::detail
