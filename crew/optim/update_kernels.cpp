#include "crew/optim/update_kernels.h"

#include <cmath>

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define CREW_OPTIM_AVX2 1
#endif

namespace crew::optim::kernels {

namespace {

template <typename T>
void sgd_impl(T* __restrict p, const T* __restrict g, int64_t n, T lr, T l2) {
  for (int64_t i = 0; i < n; ++i) p[i] -= lr * (g[i] + l2 * p[i]);
}

template <typename T>
void momentum_impl(T* __restrict p, const T* __restrict g, T* __restrict v, int64_t n, T lr, T mu, T l2,
                   bool nesterov) {
  if (nesterov) {
    for (int64_t i = 0; i < n; ++i) {
      T gi = g[i] + l2 * p[i];
      T vi = mu * v[i] + gi;
      v[i] = vi;
      p[i] -= lr * (gi + mu * vi);
    }
  } else {
    for (int64_t i = 0; i < n; ++i) {
      T vi = mu * v[i] + (g[i] + l2 * p[i]);
      v[i] = vi;
      p[i] -= lr * vi;
    }
  }
}

// The scalar form of the Adam update on [begin, n).
template <typename T>
void adam_scalar(T* __restrict p, const T* __restrict g, T* __restrict m1, T* __restrict m2, int64_t begin,
                 int64_t n, const AdamCoefficients& c) {
  const T b1 = static_cast<T>(c.beta1), b2 = static_cast<T>(c.beta2);
  const T one_b1 = static_cast<T>(1.0 - c.beta1), one_b2 = static_cast<T>(1.0 - c.beta2);
  const T lr_t = static_cast<T>(c.lr_t), eps_t = static_cast<T>(c.eps_t);
  const T l2 = static_cast<T>(c.l2), decay = static_cast<T>(c.decay_scale);
  for (int64_t i = begin; i < n; ++i) {
    T pi = p[i];
    T gi = g[i] + l2 * pi;
    T a = b1 * m1[i] + one_b1 * gi;
    T b = b2 * m2[i] + one_b2 * gi * gi;
    m1[i] = a;
    m2[i] = b;
    p[i] = pi * decay - lr_t * a / (std::sqrt(b) + eps_t);
  }
}

}  // namespace

void sgd(float* p, const float* g, int64_t n, float lr, float l2) { sgd_impl(p, g, n, lr, l2); }
void sgd(double* p, const double* g, int64_t n, double lr, double l2) { sgd_impl(p, g, n, lr, l2); }

void momentum(float* p, const float* g, float* v, int64_t n, float lr, float mu, float l2, bool nesterov) {
  momentum_impl(p, g, v, n, lr, mu, l2, nesterov);
}
void momentum(double* p, const double* g, double* v, int64_t n, double lr, double mu, double l2,
              bool nesterov) {
  momentum_impl(p, g, v, n, lr, mu, l2, nesterov);
}

void adam(double* p, const double* g, double* m1, double* m2, int64_t n, const AdamCoefficients& c) {
  adam_scalar(p, g, m1, m2, 0, n, c);
}

// float32: 8 lanes per iteration where AVX2/FMA is available; std::sqrt's errno handling
// keeps GCC from vectorising the scalar loop, so the vector form is spelled out.
void adam(float* p, const float* g, float* m1, float* m2, int64_t n, const AdamCoefficients& c) {
  int64_t i = 0;
#ifdef CREW_OPTIM_AVX2
  const __m256 b1 = _mm256_set1_ps(static_cast<float>(c.beta1));
  const __m256 b2 = _mm256_set1_ps(static_cast<float>(c.beta2));
  const __m256 one_b1 = _mm256_set1_ps(static_cast<float>(1.0 - c.beta1));
  const __m256 one_b2 = _mm256_set1_ps(static_cast<float>(1.0 - c.beta2));
  const __m256 lr_t = _mm256_set1_ps(static_cast<float>(c.lr_t));
  const __m256 eps_t = _mm256_set1_ps(static_cast<float>(c.eps_t));
  const __m256 l2 = _mm256_set1_ps(static_cast<float>(c.l2));
  const __m256 decay = _mm256_set1_ps(static_cast<float>(c.decay_scale));
  for (; i + 8 <= n; i += 8) {
    __m256 pi = _mm256_loadu_ps(p + i);
    __m256 gi = _mm256_fmadd_ps(l2, pi, _mm256_loadu_ps(g + i));
    __m256 a = _mm256_fmadd_ps(b1, _mm256_loadu_ps(m1 + i), _mm256_mul_ps(one_b1, gi));
    __m256 b = _mm256_fmadd_ps(b2, _mm256_loadu_ps(m2 + i), _mm256_mul_ps(one_b2, _mm256_mul_ps(gi, gi)));
    _mm256_storeu_ps(m1 + i, a);
    _mm256_storeu_ps(m2 + i, b);
    __m256 step = _mm256_div_ps(_mm256_mul_ps(lr_t, a), _mm256_add_ps(_mm256_sqrt_ps(b), eps_t));
    _mm256_storeu_ps(p + i, _mm256_fmsub_ps(pi, decay, step));
  }
#endif
  adam_scalar(p, g, m1, m2, i, n, c);
}

}  // namespace crew::optim::kernels
