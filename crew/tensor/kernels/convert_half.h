#pragma once
// Bulk conversions between float32 and the 16-bit float formats, rounding to nearest even
// with NaN and inf kept (crew/tensor/half.h gives the one-element versions, which these
// match bit for bit up to the NaN payload).
#include <cstdint>

#include "crew/tensor/half.h"

namespace crew::kernels {

// n floats -> n bfloat16; vectorized integer rounding (VCVTNEPS2BF16 would flush subnormals).
void float_to_bf16(const float* src, bfloat16* dst, int64_t n);
// n bfloat16 -> n floats (exact).
void bf16_to_float(const bfloat16* src, float* dst, int64_t n);
// n floats -> n float16, with F16C's VCVTPS2PH where the build targets it.
void float_to_fp16(const float* src, float16* dst, int64_t n);
// n float16 -> n floats (exact), with F16C's VCVTPH2PS where the build targets it.
void fp16_to_float(const float16* src, float* dst, int64_t n);

}  // namespace crew::kernels
