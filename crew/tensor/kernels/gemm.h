#pragma once
// Matrix products, row-major: float32 on oneDNN's sgemm, float64 on OpenBLAS dgemm. gemm,
// linear_f32 and matmul_views take host pointers: they are the CPU kernels' building blocks,
// not entry points for code above the kernels (which calls matmul, linear_forward, ...).
#include <cstdint>
#include <vector>

#include "crew/tensor/kernels/dispatch.h"
#include "crew/tensor/tensor.h"

namespace crew::kernels {

// C[M, N] = alpha * op(A) * op(B) + beta * C, with op(A) [M, K], op(B) [K, N]; A, B, C
// row-major with leading dimensions lda, ldb, ldc.
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
          int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha, const double* a,
          int64_t lda, const double* b, int64_t ldb, double beta, double* c, int64_t ldc);

// y[M, N] = x[M, K] w[K, N] + bias[N], float32, all row-major; bias may be null. One oneDNN
// matmul with the bias fused (no pass that writes the bias rows first). In matmul.cpp.
void linear_f32(int64_t m, int64_t k, int64_t n, const float* x, const float* w, const float* bias, float* y);
// linear_f32 for float32, bfloat16 or float16 operands (all of `dtype`; oneDNN accumulates
// 16-bit products in float32). In matmul.cpp.
void linear_dnnl(int64_t m, int64_t k, int64_t n, const void* x, const void* w, const void* bias, void* y,
                 DType dtype);

// An operand of matmul_views: dims [batch..., rows, cols] with element strides over a buffer
// of `dtype` elements, so that e.g. [B, T, H, D] data is read or written as [B, H, T, D] (or
// transposed) without a copy.
struct MatrixView {
  void* data = nullptr;
  std::vector<int64_t> dims;
  std::vector<int64_t> strides;
  DType dtype = DType::FLOAT32;
};
// c = alpha * a x b on one oneDNN matmul (any strides; batch dims of a and b equal to c's or 1).
// a and b of one dtype; c float32 or a's dtype (bfloat16/float16 sources accumulate in
// float32; the caller checks dnnl_supports first).
void matmul_views(const MatrixView& a, const MatrixView& b, const MatrixView& c, float alpha = 1.0f);

// op(a) x op(b) for a [..., M, K] and b [..., K, N] (each at least 2-d; op = transpose of the
// last two axes when requested) -> [batch..., M, N], the leading (batch) axes broadcast
// NumPy-style: [B, H, T, D] x [B, H, D, T], [B, T, K] x [K, N], [B, T, K] x [1, K, N].
// float32 batches run as one oneDNN matmul primitive; a 2-d b with an untransposed a folds
// a's batch into M (one gemm). Operands on one place; runs that place's entry of
// matmul_kernel (validated operands). Implemented in matmul.cpp.
Tensor matmul(const Tensor& a, const Tensor& b, bool trans_a, bool trans_b);
using MatmulFn = Tensor(const Tensor& a, const Tensor& b, bool trans_a, bool trans_b);
extern KernelSlot<MatmulFn> matmul_kernel;

}  // namespace crew::kernels
