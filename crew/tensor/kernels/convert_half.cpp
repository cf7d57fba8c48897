#include "crew/tensor/kernels/convert_half.h"

#if defined(__F16C__)
#include <immintrin.h>
#endif

#include "crew/tensor/kernels/threading.h"

namespace crew::kernels {
namespace {

// Below this many elements a conversion stays on the calling thread.
constexpr int64_t kMinChunk = 1 << 15;

void float_to_bf16_range(const float* src, uint16_t* dst, int64_t n) {
  // Plain loop over the branch-free rounding: the compiler vectorizes it.
  for (int64_t i = 0; i < n; ++i) dst[i] = float_to_bf16_bits(src[i]);
}

void bf16_to_float_range(const uint16_t* src, float* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = bf16_bits_to_float(src[i]);
}

void float_to_fp16_range(const float* src, uint16_t* dst, int64_t n) {
  int64_t i = 0;
#if defined(__F16C__)
  for (; i + 8 <= n; i += 8) {
    const __m128i h =
        _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), h);
  }
#endif
  for (; i < n; ++i) dst[i] = float_to_fp16_bits(src[i]);
}

void fp16_to_float_range(const uint16_t* src, float* dst, int64_t n) {
  int64_t i = 0;
#if defined(__F16C__)
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i))));
  }
#endif
  for (; i < n; ++i) dst[i] = fp16_bits_to_float(src[i]);
}

template <typename S, typename D, typename Fn>
void convert_parallel(const S* src, D* dst, int64_t n, Fn fn) {
  if (n < 2 * kMinChunk) {
    fn(src, dst, n);
    return;
  }
  detail::parallel_for(n, kMinChunk,
                       [&](int64_t begin, int64_t end) { fn(src + begin, dst + begin, end - begin); });
}

}  // namespace

void float_to_bf16(const float* src, bfloat16* dst, int64_t n) {
  convert_parallel(src, reinterpret_cast<uint16_t*>(dst), n, float_to_bf16_range);
}
void bf16_to_float(const bfloat16* src, float* dst, int64_t n) {
  convert_parallel(reinterpret_cast<const uint16_t*>(src), dst, n, bf16_to_float_range);
}
void float_to_fp16(const float* src, float16* dst, int64_t n) {
  convert_parallel(src, reinterpret_cast<uint16_t*>(dst), n, float_to_fp16_range);
}
void fp16_to_float(const float16* src, float* dst, int64_t n) {
  convert_parallel(reinterpret_cast<const uint16_t*>(src), dst, n, fp16_to_float_range);
}

}  // namespace crew::kernels
