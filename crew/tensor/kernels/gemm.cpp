#include "crew/tensor/kernels/gemm.h"

#include <cblas.h>
#include <dnnl.h>

#include "crew/core/check.h"
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

}  // namespace crew::kernels
