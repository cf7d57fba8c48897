#pragma once
// Helpers of the bfloat16/float16 kernel paths. The rule (docs/kernels.md, "Low precision"):
// ops with a 16-bit kernel take bfloat16/float16 operands and return the same dtype, computing
// in float32 inside (oneDNN's bf16 primitives accumulate in float32); where oneDNN has no
// kernel for the dtype on this CPU (float16 on oneDNN 2.x, bfloat16 below AVX-512) the op
// converts its operands to float32, runs the float32 kernel and rounds the result once, after
// one warning that says so. Every other op refuses 16-bit operands with a DTypeError.
//
//   if (is_low_precision(x.dtype()) && !dnnl_supports(x.dtype(), "conv2d"))
//     return conv2d_forward(to_float32(x), ...).to(x.dtype());
#include "crew/tensor/tensor.h"

namespace crew::kernels {

// Whether oneDNN runs `dtype` (bfloat16 or float16) primitives on this CPU (probed once with
// a small matmul; ONEDNN_MAX_CPU_ISA counts). When it does not, logs once, naming `op`, that
// 16-bit ops run through float32 conversions and are slower than float32 itself.
bool dnnl_supports(DType dtype, const char* op);
// x converted to float32 (x itself when it is already float32).
Tensor to_float32(const Tensor& x);
// Throws DTypeError "<op>: dtypes differ (x bfloat16, weight float32)" unless a and b (each
// skipped when undefined) have the same dtype.
void check_same_dtype(const char* op, const char* a_name, const Tensor& a, const char* b_name,
                      const Tensor& b);
// Float32/float64/bfloat16/float16; DTypeError naming the op otherwise.
void check_floating_or_half(const Tensor& t, const char* op);

}  // namespace crew::kernels
