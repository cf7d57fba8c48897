#include "crew/tensor/kernels/pool_direct.h"

#include <algorithm>
#include <cstdint>
#include <limits>

#include "crew/tensor/kernels/threading.h"

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace crew::kernels::detail {
namespace {

struct Plane {
  int64_t h, w, oh, ow;
};

// Window of output (oy, ox) clipped to the input: rows [y0, y1), columns [x0, x1).
struct Window {
  int64_t y0, y1, x0, x1;
};

inline Window window(const Plane& d, const Pool2dParams& p, int64_t oy, int64_t ox) {
  const int64_t ys = oy * p.stride[0] - p.padding[0];
  const int64_t xs = ox * p.stride[1] - p.padding[1];
  return {std::max<int64_t>(ys, 0), std::min<int64_t>(ys + p.kernel[0], d.h), std::max<int64_t>(xs, 0),
          std::min<int64_t>(xs + p.kernel[1], d.w)};
}

bool is_2x2_stride2(const Pool2dParams& p) {
  return p.kernel[0] == 2 && p.kernel[1] == 2 && p.stride[0] == 2 && p.stride[1] == 2 && p.padding[0] == 0 &&
         p.padding[1] == 0;
}

// The common 2x2 / stride 2 / no padding max pool, and its backward, without bounds checks
// and without branches: after a ReLU which of a window's values is largest is a coin toss
// that a branch predictor loses. With AVX2, 8 outputs at a time (the two rows' even and odd
// columns de-interleaved; a row's last block masked), else one at a time. Ties go to the
// first maximum in row-major order, as in max_general (a NaN is skipped, except in the
// window's top-left corner, where it is the starting value and stays).
struct Max2x2 {
  float value;
  int32_t at;  // offset in the window: 0, 1, w, w + 1
};

inline Max2x2 max_of_window(float a, float b, float c, float e, int32_t w) {
  const bool top_right = b > a;
  const float top = top_right ? b : a;
  const bool bottom_right = e > c;
  const float bottom = bottom_right ? e : c;
  if (bottom > top) return {bottom, bottom_right ? w + 1 : w};
  return {top, top_right ? 1 : 0};
}

#if defined(__AVX2__)
// Masks for the first n (0..16) of 16 consecutive floats, as two 8-lane halves.
inline void first_n(int64_t n, __m256i& lo, __m256i& hi) {
  const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  lo = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int32_t>(n)), lanes);
  hi = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int32_t>(n - 8)), lanes);
}

// Even and odd elements of the first n (default all 16) consecutive floats at p, in order;
// nothing past them is read.
inline void deinterleave(const float* p, __m256& even, __m256& odd, int64_t n = 16) {
  __m256 lo, hi;
  if (n == 16) {
    lo = _mm256_loadu_ps(p), hi = _mm256_loadu_ps(p + 8);
  } else {
    __m256i mlo, mhi;
    first_n(n, mlo, mhi);
    lo = _mm256_maskload_ps(p, mlo), hi = _mm256_maskload_ps(p + 8, mhi);
  }
  even = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(lo, hi, 0x88)), 0xD8));
  odd = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(lo, hi, 0xDD)), 0xD8));
}

// Stores even[0], odd[0], even[1], odd[1], ... as the first n (default 16) consecutive
// floats at p; nothing past them is written.
inline void interleave(float* p, __m256 even, __m256 odd, int64_t n = 16) {
  const __m256 lo = _mm256_unpacklo_ps(even, odd), hi = _mm256_unpackhi_ps(even, odd);
  const __m256 first = _mm256_permute2f128_ps(lo, hi, 0x20), second = _mm256_permute2f128_ps(lo, hi, 0x31);
  if (n == 16) {
    _mm256_storeu_ps(p, first);
    _mm256_storeu_ps(p + 8, second);
    return;
  }
  __m256i mlo, mhi;
  first_n(n, mlo, mhi);
  if (n >= 8) {
    _mm256_storeu_ps(p, first);
  } else {
    _mm256_maskstore_ps(p, mlo, first);
  }
  if (n > 8) _mm256_maskstore_ps(p + 8, mhi, second);
}
#endif

void max_2x2(const float* x, float* y, int32_t* arg, const Plane& d) {
  const int32_t w = static_cast<int32_t>(d.w);
  for (int64_t oy = 0; oy < d.oh; ++oy) {
    const float* r0 = x + 2 * oy * d.w;
    const float* r1 = r0 + d.w;
    float* yr = y + oy * d.ow;
    int32_t* ar = arg + oy * d.ow;
    const int32_t base = static_cast<int32_t>(2 * oy * d.w);
    int64_t ox = 0;
#if defined(__AVX2__)
    const __m256i step = _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14);
    const __m256i one = _mm256_set1_epi32(1), vw = _mm256_set1_epi32(w), vw1 = _mm256_set1_epi32(w + 1);
    for (; ox < d.ow; ox += 8) {
      const int64_t n = std::min<int64_t>(8, d.ow - ox);  // the last block of a row may be partial
      __m256 a, b, c, e;
      deinterleave(r0 + 2 * ox, a, b, 2 * n);
      deinterleave(r1 + 2 * ox, c, e, 2 * n);
      const __m256 top_right = _mm256_cmp_ps(b, a, _CMP_GT_OQ);
      const __m256 top = _mm256_blendv_ps(a, b, top_right);
      const __m256 bottom_right = _mm256_cmp_ps(e, c, _CMP_GT_OQ);
      const __m256 bottom = _mm256_blendv_ps(c, e, bottom_right);
      const __m256 lower = _mm256_cmp_ps(bottom, top, _CMP_GT_OQ);
      const __m256i top_at = _mm256_and_si256(_mm256_castps_si256(top_right), one);
      const __m256i bottom_at = _mm256_castps_si256(
          _mm256_blendv_ps(_mm256_castsi256_ps(vw), _mm256_castsi256_ps(vw1), bottom_right));
      const __m256i at = _mm256_castps_si256(
          _mm256_blendv_ps(_mm256_castsi256_ps(top_at), _mm256_castsi256_ps(bottom_at), lower));
      const __m256i origin = _mm256_add_epi32(_mm256_set1_epi32(base + static_cast<int32_t>(2 * ox)), step);
      const __m256 value = _mm256_blendv_ps(top, bottom, lower);
      const __m256i where = _mm256_add_epi32(origin, at);
      if (n == 8) {
        _mm256_storeu_ps(yr + ox, value);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(ar + ox), where);
      } else {
        __m256i mask, unused;
        first_n(n, mask, unused);
        _mm256_maskstore_ps(yr + ox, mask, value);
        _mm256_maskstore_epi32(ar + ox, mask, where);
      }
    }
#endif
    for (; ox < d.ow; ++ox) {
      const Max2x2 m = max_of_window(r0[2 * ox], r0[2 * ox + 1], r1[2 * ox], r1[2 * ox + 1], w);
      yr[ox] = m.value;
      ar[ox] = base + static_cast<int32_t>(2 * ox) + m.at;
    }
  }
}

// Narrower outputs (rows of under 8 outputs are all masked blocks, and masked stores are
// microcoded on AMD) are faster with the zero-fill and scatter below (docs/kernels.md).
constexpr int64_t kMax2x2BackwardMinWidth = 8;

// Backward of max_2x2: the windows tile the plane without overlap, so every element is
// written once, straight (the gradient where the argmax points, else 0); the last row and
// column that no window covers (odd extents) are zeroed. No zero-fill pass, no scatter.
void max_2x2_backward(const float* g, const int32_t* arg, float* dx, const Plane& d) {
  const int32_t w = static_cast<int32_t>(d.w);
  for (int64_t oy = 0; oy < d.oh; ++oy) {
    float* r0 = dx + 2 * oy * d.w;
    float* r1 = r0 + d.w;
    const float* gr = g + oy * d.ow;
    const int32_t* ar = arg + oy * d.ow;
    const int32_t base = static_cast<int32_t>(2 * oy * d.w);
    int64_t ox = 0;
#if defined(__AVX2__)
    const __m256i step = _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14);
    const __m256i zero = _mm256_setzero_si256(), one = _mm256_set1_epi32(1);
    const __m256i vw = _mm256_set1_epi32(w), vw1 = _mm256_set1_epi32(w + 1);
    for (; ox < d.ow; ox += 8) {
      const int64_t n = std::min<int64_t>(8, d.ow - ox);
      __m256i mask, unused;
      first_n(n, mask, unused);
      const __m256i origin = _mm256_add_epi32(_mm256_set1_epi32(base + static_cast<int32_t>(2 * ox)), step);
      const __m256i at = _mm256_sub_epi32(_mm256_maskload_epi32(ar + ox, mask), origin);
      const __m256 v = _mm256_maskload_ps(gr + ox, mask);
      auto where = [&](__m256i offset) {
        return _mm256_and_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(at, offset)), v);
      };
      interleave(r0 + 2 * ox, where(zero), where(one), 2 * n);
      interleave(r1 + 2 * ox, where(vw), where(vw1), 2 * n);
    }
#endif
    for (; ox < d.ow; ++ox) {
      const int32_t at = ar[ox] - base - static_cast<int32_t>(2 * ox);
      const float v = gr[ox];
      r0[2 * ox] = at == 0 ? v : 0.0f;
      r0[2 * ox + 1] = at == 1 ? v : 0.0f;
      r1[2 * ox] = at == w ? v : 0.0f;
      r1[2 * ox + 1] = at == w + 1 ? v : 0.0f;
    }
    for (int64_t ix = 2 * d.ow; ix < d.w; ++ix) r0[ix] = r1[ix] = 0.0f;
  }
  std::fill(dx + 2 * d.oh * d.w, dx + d.h * d.w, 0.0f);
}

void max_general(const float* x, float* y, int32_t* arg, const Plane& d, const Pool2dParams& p) {
  for (int64_t oy = 0; oy < d.oh; ++oy) {
    for (int64_t ox = 0; ox < d.ow; ++ox) {
      const Window win = window(d, p, oy, ox);
      float best = -std::numeric_limits<float>::infinity();
      int64_t at = win.y0 * d.w + win.x0;
      for (int64_t iy = win.y0; iy < win.y1; ++iy) {
        for (int64_t ix = win.x0; ix < win.x1; ++ix) {
          const float v = x[iy * d.w + ix];
          if (v > best) best = v, at = iy * d.w + ix;
        }
      }
      y[oy * d.ow + ox] = best;
      arg[oy * d.ow + ox] = static_cast<int32_t>(at);
    }
  }
}

void avg_general(const float* x, float* y, const Plane& d, const Pool2dParams& p) {
  for (int64_t oy = 0; oy < d.oh; ++oy) {
    for (int64_t ox = 0; ox < d.ow; ++ox) {
      const Window win = window(d, p, oy, ox);
      float total = 0;
      for (int64_t iy = win.y0; iy < win.y1; ++iy) {
        for (int64_t ix = win.x0; ix < win.x1; ++ix) total += x[iy * d.w + ix];
      }
      y[oy * d.ow + ox] = total / static_cast<float>((win.y1 - win.y0) * (win.x1 - win.x0));
    }
  }
}

Plane plane_of(const Shape& x, const Shape& y) { return {x[2], x[3], y[2], y[3]}; }

}  // namespace

void pool2d_direct_forward(PoolKind kind, const Tensor& x, const Pool2dParams& p, const Tensor& y,
                           const Tensor& argmax) {
  const Plane d = plane_of(x.shape(), y.shape());
  const int64_t planes = x.size(0) * x.size(1);
  const float* xp = x.data<float>();
  float* yp = y.data<float>();
  int32_t* args = kind == PoolKind::MAX ? argmax.data<int32_t>() : nullptr;
  crew::detail::parallel_for(planes, 16, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const float* src = xp + i * d.h * d.w;
      float* dst = yp + i * d.oh * d.ow;
      if (kind == PoolKind::AVG) {
        avg_general(src, dst, d, p);
      } else if (is_2x2_stride2(p)) {
        max_2x2(src, dst, args + i * d.oh * d.ow, d);
      } else {
        max_general(src, dst, args + i * d.oh * d.ow, d, p);
      }
    }
  });
}

void pool2d_direct_backward(PoolKind kind, const Tensor& grad_y, const Tensor& argmax, const Pool2dParams& p,
                            const Tensor& grad_x) {
  const Plane d = plane_of(grad_x.shape(), grad_y.shape());
  const int64_t planes = grad_x.size(0) * grad_x.size(1);
  const float* gy = grad_y.data<float>();
  float* gx = grad_x.data<float>();
  const int32_t* args = kind == PoolKind::MAX ? argmax.data<int32_t>() : nullptr;
  // Planes are independent, so threads never write the same element.
  crew::detail::parallel_for(planes, 16, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const float* g = gy + i * d.oh * d.ow;
      float* dst = gx + i * d.h * d.w;
      if (kind == PoolKind::MAX && is_2x2_stride2(p) && d.ow >= kMax2x2BackwardMinWidth) {
        max_2x2_backward(g, args + i * d.oh * d.ow, dst, d);
        continue;
      }
      // grad_x comes uninitialised: zero the plane here, so it is still in cache for the scatter.
      std::fill(dst, dst + d.h * d.w, 0.0f);
      if (kind == PoolKind::MAX) {
        const int32_t* arg = args + i * d.oh * d.ow;
        for (int64_t k = 0; k < d.oh * d.ow; ++k) dst[arg[k]] += g[k];
        continue;
      }
      for (int64_t oy = 0; oy < d.oh; ++oy) {
        for (int64_t ox = 0; ox < d.ow; ++ox) {
          const Window win = window(d, p, oy, ox);
          const float share = g[oy * d.ow + ox] / static_cast<float>((win.y1 - win.y0) * (win.x1 - win.x0));
          for (int64_t iy = win.y0; iy < win.y1; ++iy) {
            for (int64_t ix = win.x0; ix < win.x1; ++ix) dst[iy * d.w + ix] += share;
          }
        }
      }
    }
  });
}

}  // namespace crew::kernels::detail
