#include "crew/tensor/kernels/gemm.h"

#include <cblas.h>
#include <dnnl.h>

#include "crew/core/check.h"
#include "crew/tensor/kernels/broadcast.h"
#include "crew/tensor/kernels/threading.h"

namespace crew::kernels {

// float32 goes to oneDNN's sgemm (row-major): as fast as OpenBLAS or faster on the linear
// layers' shapes (docs/kernels.md), and it runs on the same OpenMP team as the convolutions,
// where OpenBLAS's own pthreads would spin beside it.
void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
          const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  crew::detail::ensure_threads_initialized();
  if (m == 0 || n == 0) return;
  if (k == 0) {  // an empty product: C = beta * C
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = beta == 0.0f ? 0.0f : beta * c[i * ldc + j];
    }
    return;
  }
  const dnnl_status_t st =
      dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  CREW_CHECK(st == dnnl_success, "gemm: oneDNN sgemm failed (status ", static_cast<int>(st), ") for m=", m,
             " n=", n, " k=", k);
}

void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const double* a, int64_t lda,
          const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  crew::detail::ensure_threads_initialized();
  cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
              static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), alpha, a, static_cast<int>(lda),
              b, static_cast<int>(ldb), beta, c, static_cast<int>(ldc));
}

Tensor matmul(const Tensor& a, const Tensor& b, bool ta, bool tb) {
  check_floating(a, "matmul");
  check_floating(b, "matmul");
  CREW_CHECK(a.dtype() == b.dtype(), "matmul: dtypes differ (", dtype_name(a.dtype()), " vs ",
             dtype_name(b.dtype()), ")");
  CREW_CHECK(a.dim() == b.dim() && (a.dim() == 2 || a.dim() == 3),
             "matmul: expected two 2-d or two 3-d tensors, got ", shape_str(a.shape()), " and ",
             shape_str(b.shape()));
  const bool batched = a.dim() == 3;
  const int64_t ba = batched ? a.size(0) : 1;
  const int64_t bb = batched ? b.size(0) : 1;
  CREW_CHECK(ba == bb || ba == 1 || bb == 1, "matmul: batch sizes ", ba, " and ", bb, " differ");
  const int64_t batch = std::max(ba, bb);
  const int64_t ar = a.size(-2), ac = a.size(-1), br = b.size(-2), bc = b.size(-1);
  const int64_t m = ta ? ac : ar, k = ta ? ar : ac;
  const int64_t kb = tb ? bc : br, n = tb ? br : bc;
  CREW_CHECK(k == kb, "matmul: inner dimensions differ: ", shape_str(a.shape()), (ta ? "^T" : ""), " x ",
             shape_str(b.shape()), (tb ? "^T" : ""));
  Shape out = batched ? Shape{batch, m, n} : Shape{m, n};
  Tensor c = Tensor::uninitialized(out, a.dtype());
  dispatch_dtype(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T>) {
      const T* ap = a.data<T>();
      const T* bp = b.data<T>();
      T* cp = c.data<T>();
      for (int64_t i = 0; i < batch; ++i) {
        gemm(ta, tb, m, n, k, T(1), ap + (ba == 1 ? 0 : i * ar * ac), ac, bp + (bb == 1 ? 0 : i * br * bc),
             bc, T(0), cp + i * m * n, n);
      }
    }
  });
  return c;
}

}  // namespace crew::kernels
