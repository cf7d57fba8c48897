// The CUDA backend's own kernels (launch.h): element-wise and broadcast math, reductions,
// softmax and cross-entropy rows, pooling, optimizer steps. One file so that nvcc runs once;
// the per-element math is crew's CREW_HD functors, the same the CPU kernels call.
#include <cmath>
#include <cstdint>

#include "crew/tensor/backends/cuda/grid.cuh"
#include "crew/tensor/backends/cuda/launch.h"
#include "crew/tensor/kernels/math/adam_step.h"
#include "crew/tensor/kernels/math/cross_entropy_row.h"
#include "crew/tensor/kernels/math/gelu.h"
#include "crew/tensor/kernels/math/sgd_step.h"

namespace crew::cuda::launch {
namespace {

template <typename T>
__global__ void fill_k(T* p, int64_t n, T v) {
  CREW_GRID_LOOP(i, n) p[i] = v;
}

template <typename S, typename D>
__global__ void cast_k(const S* s, D* d, int64_t n) {
  CREW_GRID_LOOP(i, n) d[i] = static_cast<D>(s[i]);
}

template <typename F>
void with_elem(Elem t, F f) {
  switch (t) {
    case Elem::F32: f(float{}); break;
    case Elem::F64: f(double{}); break;
    case Elem::I32: f(int32_t{}); break;
    case Elem::I64: f(int64_t{}); break;
    case Elem::U8: f(uint8_t{}); break;
  }
}

template <typename T>
__global__ void binary_k(int op, const T* a, const T* b, T* out, int64_t n, Dims d) {
  CREW_GRID_LOOP(i, n) {
    int64_t rem = i, oa = 0, ob = 0;
    for (int ax = d.nd - 1; ax >= 0; --ax) {
      const int64_t c = rem % d.size[ax];
      rem /= d.size[ax];
      oa += c * d.stride_a[ax];
      ob += c * d.stride_b[ax];
    }
    const T x = a[oa], y = b[ob];
    out[i] = op == 0 ? x + y : op == 1 ? x - y : op == 2 ? x * y : x / y;
  }
}

// d.size: g's extents; d.stride_a: the output's strides over them (0: summed away).
template <typename T>
__global__ void sum_to_k(const T* g, T* out, int64_t out_n, Dims d) {
  CREW_GRID_LOOP(o, out_n) {
    // The output coordinates (kept axes), then every combination of the summed axes, in
    // row-major order of g.
    int64_t kept_off = 0, rem = o, red_n = 1;
    int64_t gstride[kMaxDims];
    int64_t acc_stride = 1;
    for (int ax = d.nd - 1; ax >= 0; --ax) {
      gstride[ax] = acc_stride;
      acc_stride *= d.size[ax];
    }
    for (int ax = d.nd - 1; ax >= 0; --ax) {
      if (d.stride_a[ax] != 0) {
        const int64_t c = rem % d.size[ax];
        rem /= d.size[ax];
        kept_off += c * gstride[ax];
      } else {
        red_n *= d.size[ax];
      }
    }
    T acc = 0;
    for (int64_t r = 0; r < red_n; ++r) {
      int64_t rr = r, off = kept_off;
      for (int ax = d.nd - 1; ax >= 0; --ax) {
        if (d.stride_a[ax] == 0) {
          off += (rr % d.size[ax]) * gstride[ax];
          rr /= d.size[ax];
        }
      }
      acc += g[off];
    }
    out[o] = acc;
  }
}

template <typename T>
__global__ void affine_k(const T* a, T* y, int64_t n, T alpha, T beta) {
  CREW_GRID_LOOP(i, n) y[i] = a[i] * alpha + beta;
}

template <typename T>
__global__ void add_inplace_k(T* d, const T* s, int64_t n) {
  CREW_GRID_LOOP(i, n) d[i] += s[i];
}

template <typename T>
__global__ void unary_k(int op, const T* x, T* y, int64_t n, T e) {
  CREW_GRID_LOOP(i, n) {
    const T v = x[i];
    y[i] = op == 0 ? std::exp(v) : op == 1 ? std::log(v) : op == 2 ? std::pow(v, e) : e * std::pow(v, e - T(1));
  }
}

template <typename T>
__device__ T gelu_tanh(T x) {
  const T k = T(0.7978845608028654);
  return T(0.5) * x * (1 + std::tanh(k * (x + T(0.044715) * x * x * x)));
}
template <typename T>
__device__ T gelu_tanh_grad(T x) {
  const T k = T(0.7978845608028654);
  const T t = std::tanh(k * (x + T(0.044715) * x * x * x));
  return T(0.5) * (1 + t) + T(0.5) * x * (1 - t * t) * k * (1 + 3 * T(0.044715) * x * x);
}

template <typename T>
__global__ void act_fwd_k(int kind, const T* x, T* y, int64_t n) {
  CREW_GRID_LOOP(i, n) {
    const T v = x[i];
    switch (kind) {
      case 0: y[i] = v > T(0) ? v : T(0); break;
      case 1: y[i] = T(1) / (T(1) + std::exp(-v)); break;
      case 2: y[i] = std::tanh(v); break;
      case 3: y[i] = kernels::math::GeluErf<T>::forward(v); break;
      default: y[i] = gelu_tanh(v); break;
    }
  }
}

template <typename T>
__global__ void act_bwd_k(int kind, const T* gy, const T* x, const T* y, T* gx, int64_t n) {
  CREW_GRID_LOOP(i, n) {
    const T g = gy[i];
    switch (kind) {
      case 0: gx[i] = y[i] > T(0) ? g : T(0); break;
      case 1: gx[i] = g * y[i] * (T(1) - y[i]); break;
      case 2: gx[i] = g * (T(1) - y[i] * y[i]); break;
      case 3: gx[i] = g * kernels::math::GeluErf<T>::derivative(x[i]); break;
      default: gx[i] = g * gelu_tanh_grad(x[i]); break;
    }
  }
}

template <typename T>
__global__ void sum_axis_k(const T* x, T* y, int64_t outer, int64_t axis, int64_t inner, T scale) {
  CREW_GRID_LOOP(i, outer * inner) {
    const int64_t o = i / inner, in = i % inner;
    const T* p = x + o * axis * inner + in;
    T acc = 0;
    for (int64_t a = 0; a < axis; ++a) acc += p[a * inner];
    y[i] = acc * scale;
  }
}

template <typename T>
__global__ void argmax_k(const T* x, int64_t* y, int64_t outer, int64_t axis, int64_t inner) {
  CREW_GRID_LOOP(i, outer * inner) {
    const int64_t o = i / inner, in = i % inner;
    const T* p = x + o * axis * inner + in;
    int64_t best = 0;
    T bv = p[0];
    for (int64_t a = 1; a < axis; ++a)
      if (p[a * inner] > bv) {
        bv = p[a * inner];
        best = a;
      }
    y[i] = best;
  }
}

template <typename T>
__global__ void softmax_fwd_k(const T* x, T* y, int64_t outer, int64_t axis, int64_t inner, bool log_out) {
  CREW_GRID_LOOP(i, outer * inner) {
    const int64_t base = (i / inner) * axis * inner + i % inner;
    T mx = x[base];
    for (int64_t a = 1; a < axis; ++a) mx = x[base + a * inner] > mx ? x[base + a * inner] : mx;
    T total = 0;
    for (int64_t a = 0; a < axis; ++a) total += std::exp(x[base + a * inner] - mx);
    const T log_total = std::log(total);
    for (int64_t a = 0; a < axis; ++a) {
      const T shifted = x[base + a * inner] - mx;
      y[base + a * inner] = log_out ? shifted - log_total : std::exp(shifted - log_total);
    }
  }
}

template <typename T>
__global__ void softmax_bwd_k(const T* g, const T* y, T* gx, int64_t outer, int64_t axis, int64_t inner,
                              bool log_out) {
  CREW_GRID_LOOP(i, outer * inner) {
    const int64_t base = (i / inner) * axis * inner + i % inner;
    T dot = 0;
    for (int64_t a = 0; a < axis; ++a) {
      const int64_t k = base + a * inner;
      dot += log_out ? g[k] : g[k] * y[k];
    }
    for (int64_t a = 0; a < axis; ++a) {
      const int64_t k = base + a * inner;
      gx[k] = log_out ? g[k] - std::exp(y[k]) * dot : y[k] * (g[k] - dot);
    }
  }
}

template <typename T>
__global__ void ce_fwd_k(const T* x, const int64_t* labels, T* loss, T* probs, int64_t rows, int64_t k,
                         unsigned long long* counted, unsigned long long* bad) {
  CREW_GRID_LOOP(r, rows) {
    const int64_t label = labels[r];
    if (label != kernels::math::kIgnoreIndex && (label < 0 || label >= k)) {
      atomicMin(bad, static_cast<unsigned long long>(r));
      loss[r] = T(0);
      continue;
    }
    if (label != kernels::math::kIgnoreIndex) atomicAdd(counted, 1ULL);
    loss[r] = kernels::math::CrossEntropyRow<T>::forward(x + r * k, label, k, probs + r * k);
  }
}

template <typename T>
__global__ void ce_bwd_k(T* gx, const int64_t* labels, const T* gy, int64_t rows, int64_t k, double scale,
                         bool per_row) {
  CREW_GRID_LOOP(r, rows) {
    const T gi = per_row ? gy[r] : static_cast<T>(gy[0] * scale);
    kernels::math::CrossEntropyRow<T>::backward(gx + r * k, labels[r], k, gi);
  }
}

template <typename T>
__global__ void pool_fwd_k(bool max, const T* x, T* y, int32_t* ws, Pool p) {
  CREW_GRID_LOOP(i, p.n * p.c * p.oh * p.ow) {
    const int64_t ox = i % p.ow, oy = (i / p.ow) % p.oh, plane = i / (p.ow * p.oh);
    const T* xp = x + plane * p.h * p.w;
    const int64_t y0 = oy * p.sh - p.ph, x0 = ox * p.sw - p.pw;
    T best = -INFINITY, sum = 0;
    int32_t arg = -1;
    int64_t count = 0;
    for (int64_t ky = 0; ky < p.kh; ++ky) {
      const int64_t yy = y0 + ky;
      if (yy < 0 || yy >= p.h) continue;
      for (int64_t kx = 0; kx < p.kw; ++kx) {
        const int64_t xx = x0 + kx;
        if (xx < 0 || xx >= p.w) continue;
        const T v = xp[yy * p.w + xx];
        if (max) {
          if (arg < 0 || v > best) {
            best = v;
            arg = static_cast<int32_t>(yy * p.w + xx);
          }
        } else {
          sum += v;
          ++count;
        }
      }
    }
    if (max) {
      y[i] = best;
      if (ws) ws[i] = arg;
    } else {
      y[i] = count > 0 ? sum / static_cast<T>(count) : T(0);
    }
  }
}

// Gathers, per input element, the gradients of the windows that cover it (deterministic).
template <typename T>
__global__ void pool_bwd_k(bool max, const T* gy, const int32_t* ws, T* gx, Pool p) {
  CREW_GRID_LOOP(i, p.n * p.c * p.h * p.w) {
    const int64_t xx = i % p.w, yy = (i / p.w) % p.h, plane = i / (p.w * p.h);
    const int64_t in_plane = yy * p.w + xx;
    // windows oy with oy*sh - ph <= yy < oy*sh - ph + kh
    int64_t oy_lo = (yy + p.ph - p.kh + p.sh) / p.sh;
    if (yy + p.ph - p.kh + 1 < 0) oy_lo = 0;
    int64_t oy_hi = (yy + p.ph) / p.sh;
    int64_t ox_lo = (xx + p.pw - p.kw + p.sw) / p.sw;
    if (xx + p.pw - p.kw + 1 < 0) ox_lo = 0;
    int64_t ox_hi = (xx + p.pw) / p.sw;
    if (oy_hi >= p.oh) oy_hi = p.oh - 1;
    if (ox_hi >= p.ow) ox_hi = p.ow - 1;
    T acc = 0;
    for (int64_t oy = oy_lo < 0 ? 0 : oy_lo; oy <= oy_hi; ++oy) {
      for (int64_t ox = ox_lo < 0 ? 0 : ox_lo; ox <= ox_hi; ++ox) {
        const int64_t o = plane * p.oh * p.ow + oy * p.ow + ox;
        if (max) {
          if (ws[o] == in_plane) acc += gy[o];
        } else {
          const int64_t y0 = oy * p.sh - p.ph, x0 = ox * p.sw - p.pw;
          const int64_t y1 = y0 + p.kh < p.h ? y0 + p.kh : p.h, x1 = x0 + p.kw < p.w ? x0 + p.kw : p.w;
          const int64_t cnt = (y1 - (y0 < 0 ? 0 : y0)) * (x1 - (x0 < 0 ? 0 : x0));
          acc += gy[o] / static_cast<T>(cnt);
        }
      }
    }
    gx[i] = acc;
  }
}

template <typename T>
__global__ void sgd_k(T* p, const T* g, int64_t n, T lr, T l2) {
  const kernels::SgdStep<T> step{lr, l2};
  CREW_GRID_LOOP(i, n) step(p[i], g[i]);
}

template <typename T, bool Nesterov>
__global__ void momentum_k(T* p, const T* g, T* v, int64_t n, T lr, T mu, T l2) {
  const kernels::MomentumStep<T, Nesterov> step{lr, mu, l2};
  CREW_GRID_LOOP(i, n) step(p[i], g[i], v[i]);
}

template <typename T>
__global__ void adam_k(T* p, const T* g, T* m1, T* m2, int64_t n, kernels::AdamStep<T> step) {
  CREW_GRID_LOOP(i, n) step(p[i], g[i], m1[i], m2[i]);
}

template <typename T>
__global__ void sq_partial_k(const T* g, int64_t n, double* partials) {
  __shared__ double sh[kT];
  double acc = 0;
  CREW_GRID_LOOP(i, n) acc += static_cast<double>(g[i]) * static_cast<double>(g[i]);
  sh[threadIdx.x] = acc;
  __syncthreads();
  for (unsigned s = kT / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) sh[threadIdx.x] += sh[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) partials[blockIdx.x] = sh[0];
}

__global__ void sum_partials_k(const double* partials, int n, double* out) {
  if (threadIdx.x == 0 && blockIdx.x == 0) {
    double acc = 0;
    for (int i = 0; i < n; ++i) acc += partials[i];
    *out = acc;
  }
}

template <typename T>
__global__ void scale_k(T* g, int64_t n, T f) {
  CREW_GRID_LOOP(i, n) g[i] *= f;
}

template <typename T>
__global__ void clamp_k(T* g, int64_t n, T lo, T hi) {
  CREW_GRID_LOOP(i, n) g[i] = g[i] < lo ? lo : (g[i] > hi ? hi : g[i]);
}

template <typename T>
__global__ void add_bias_rows_k(T* y, const T* bias, int64_t rows, int64_t cols) {
  CREW_GRID_LOOP(i, rows * cols) y[i] += bias[i % cols];
}

}  // namespace

void fill(void* p, Elem t, int64_t n, double value, cudaStream_t s) {
  if (n == 0) return;
  with_elem(t, [&](auto tag) {
    using T = decltype(tag);
    fill_k<T><<<grid(n), kT, 0, s>>>(static_cast<T*>(p), n, static_cast<T>(value));
  });
}

void cast(const void* src, Elem st, void* dst, Elem dt, int64_t n, cudaStream_t s) {
  if (n == 0) return;
  with_elem(st, [&](auto stag) {
    using S = decltype(stag);
    with_elem(dt, [&](auto dtag) {
      using D = decltype(dtag);
      cast_k<S, D><<<grid(n), kT, 0, s>>>(static_cast<const S*>(src), static_cast<D*>(dst), n);
    });
  });
}

template <typename T>
void binary(int op, const T* a, const T* b, T* out, int64_t n, const Dims& d, cudaStream_t s) {
  if (n > 0) binary_k<<<grid(n), kT, 0, s>>>(op, a, b, out, n, d);
}
template <typename T>
void sum_to(const T* g, T* out, int64_t out_n, const Dims& d, cudaStream_t s) {
  if (out_n > 0) sum_to_k<<<grid(out_n), kT, 0, s>>>(g, out, out_n, d);
}
template <typename T>
void affine(const T* a, T* y, int64_t n, double alpha, double beta, cudaStream_t s) {
  if (n > 0) affine_k<<<grid(n), kT, 0, s>>>(a, y, n, static_cast<T>(alpha), static_cast<T>(beta));
}
template <typename T>
void add_inplace(T* dst, const T* src, int64_t n, cudaStream_t s) {
  if (n > 0) add_inplace_k<<<grid(n), kT, 0, s>>>(dst, src, n);
}
template <typename T>
void unary(int op, const T* x, T* y, int64_t n, double exponent, cudaStream_t s) {
  if (n > 0) unary_k<<<grid(n), kT, 0, s>>>(op, x, y, n, static_cast<T>(exponent));
}
template <typename T>
void activation_forward(int kind, const T* x, T* y, int64_t n, cudaStream_t s) {
  if (n > 0) act_fwd_k<<<grid(n), kT, 0, s>>>(kind, x, y, n);
}
template <typename T>
void activation_backward(int kind, const T* gy, const T* x, const T* y, T* gx, int64_t n, cudaStream_t s) {
  if (n > 0) act_bwd_k<<<grid(n), kT, 0, s>>>(kind, gy, x, y, gx, n);
}
template <typename T>
void sum_axis(const T* x, T* y, int64_t outer, int64_t axis, int64_t inner, double scale, cudaStream_t s) {
  if (outer * inner > 0) sum_axis_k<<<grid(outer * inner), kT, 0, s>>>(x, y, outer, axis, inner, static_cast<T>(scale));
}
template <typename T>
void argmax(const T* x, int64_t* y, int64_t outer, int64_t axis, int64_t inner, cudaStream_t s) {
  if (outer * inner > 0) argmax_k<<<grid(outer * inner), kT, 0, s>>>(x, y, outer, axis, inner);
}
template <typename T>
void softmax_forward(const T* x, T* y, int64_t outer, int64_t axis, int64_t inner, bool log_out, cudaStream_t s) {
  if (outer * inner > 0 && axis > 0) softmax_fwd_k<<<grid(outer * inner), kT, 0, s>>>(x, y, outer, axis, inner, log_out);
}
template <typename T>
void softmax_backward(const T* gy, const T* y, T* gx, int64_t outer, int64_t axis, int64_t inner, bool log_out,
                      cudaStream_t s) {
  if (outer * inner > 0 && axis > 0)
    softmax_bwd_k<<<grid(outer * inner), kT, 0, s>>>(gy, y, gx, outer, axis, inner, log_out);
}
template <typename T>
void cross_entropy_forward(const T* x, const int64_t* labels, T* loss, T* probs, int64_t rows, int64_t k,
                           int64_t* counted, int64_t* bad, cudaStream_t s) {
  if (rows > 0 && k > 0)
    ce_fwd_k<<<grid(rows), kT, 0, s>>>(x, labels, loss, probs, rows, k, reinterpret_cast<unsigned long long*>(counted),
                                       reinterpret_cast<unsigned long long*>(bad));
}
template <typename T>
void cross_entropy_backward(T* gx, const int64_t* labels, const T* gy, int64_t rows, int64_t k, double scale,
                            bool per_row, cudaStream_t s) {
  if (rows > 0 && k > 0) ce_bwd_k<<<grid(rows), kT, 0, s>>>(gx, labels, gy, rows, k, scale, per_row);
}
template <typename T>
void pool_forward(bool max, const T* x, T* y, int32_t* ws, const Pool& p, cudaStream_t s) {
  const int64_t n = p.n * p.c * p.oh * p.ow;
  if (n > 0) pool_fwd_k<<<grid(n), kT, 0, s>>>(max, x, y, ws, p);
}
template <typename T>
void pool_backward(bool max, const T* gy, const int32_t* ws, T* gx, const Pool& p, cudaStream_t s) {
  const int64_t n = p.n * p.c * p.h * p.w;
  if (n > 0) pool_bwd_k<<<grid(n), kT, 0, s>>>(max, gy, ws, gx, p);
}
template <typename T>
void sgd(T* p, const T* g, int64_t n, double lr, double l2, cudaStream_t s) {
  if (n > 0) sgd_k<<<grid(n), kT, 0, s>>>(p, g, n, static_cast<T>(lr), static_cast<T>(l2));
}
template <typename T>
void momentum(T* p, const T* g, T* v, int64_t n, double lr, double mu, double l2, bool nesterov, cudaStream_t s) {
  if (n == 0) return;
  if (nesterov)
    momentum_k<T, true><<<grid(n), kT, 0, s>>>(p, g, v, n, static_cast<T>(lr), static_cast<T>(mu), static_cast<T>(l2));
  else
    momentum_k<T, false><<<grid(n), kT, 0, s>>>(p, g, v, n, static_cast<T>(lr), static_cast<T>(mu), static_cast<T>(l2));
}
template <typename T>
void adam(T* p, const T* g, T* m1, T* m2, int64_t n, double beta1, double beta2, double lr_t, double eps_t,
          double l2, double decay, cudaStream_t s) {
  if (n > 0)
    adam_k<<<grid(n), kT, 0, s>>>(p, g, m1, m2, n, kernels::AdamStep<T>(beta1, beta2, lr_t, eps_t, l2, decay));
}
template <typename T>
void squared_norm(const T* g, int64_t n, double* partials, double* out, cudaStream_t s) {
  sq_partial_k<<<kNormBlocks, kT, 0, s>>>(g, n, partials);
  sum_partials_k<<<1, 1, 0, s>>>(partials, kNormBlocks, out);
}
template <typename T>
void scale(T* g, int64_t n, double factor, cudaStream_t s) {
  if (n > 0) scale_k<<<grid(n), kT, 0, s>>>(g, n, static_cast<T>(factor));
}
template <typename T>
void clamp(T* g, int64_t n, double lo, double hi, cudaStream_t s) {
  if (n > 0) clamp_k<<<grid(n), kT, 0, s>>>(g, n, static_cast<T>(lo), static_cast<T>(hi));
}
template <typename T>
void add_bias_rows(T* y, const T* bias, int64_t rows, int64_t cols, cudaStream_t s) {
  if (rows * cols > 0) add_bias_rows_k<<<grid(rows * cols), kT, 0, s>>>(y, bias, rows, cols);
}

#define CREW_CUDA_INSTANTIATE(T)                                                                       \
  template void binary<T>(int, const T*, const T*, T*, int64_t, const Dims&, cudaStream_t);           \
  template void sum_to<T>(const T*, T*, int64_t, const Dims&, cudaStream_t);                          \
  template void affine<T>(const T*, T*, int64_t, double, double, cudaStream_t);                       \
  template void add_inplace<T>(T*, const T*, int64_t, cudaStream_t);                                  \
  template void unary<T>(int, const T*, T*, int64_t, double, cudaStream_t);                           \
  template void activation_forward<T>(int, const T*, T*, int64_t, cudaStream_t);                      \
  template void activation_backward<T>(int, const T*, const T*, const T*, T*, int64_t, cudaStream_t); \
  template void sum_axis<T>(const T*, T*, int64_t, int64_t, int64_t, double, cudaStream_t);           \
  template void argmax<T>(const T*, int64_t*, int64_t, int64_t, int64_t, cudaStream_t);               \
  template void softmax_forward<T>(const T*, T*, int64_t, int64_t, int64_t, bool, cudaStream_t);      \
  template void softmax_backward<T>(const T*, const T*, T*, int64_t, int64_t, int64_t, bool, cudaStream_t); \
  template void cross_entropy_forward<T>(const T*, const int64_t*, T*, T*, int64_t, int64_t, int64_t*,  \
                                         int64_t*, cudaStream_t);                                     \
  template void cross_entropy_backward<T>(T*, const int64_t*, const T*, int64_t, int64_t, double, bool, \
                                          cudaStream_t);                                              \
  template void pool_forward<T>(bool, const T*, T*, int32_t*, const Pool&, cudaStream_t);             \
  template void pool_backward<T>(bool, const T*, const int32_t*, T*, const Pool&, cudaStream_t);      \
  template void sgd<T>(T*, const T*, int64_t, double, double, cudaStream_t);                          \
  template void momentum<T>(T*, const T*, T*, int64_t, double, double, double, bool, cudaStream_t);   \
  template void adam<T>(T*, const T*, T*, T*, int64_t, double, double, double, double, double, double, \
                        cudaStream_t);                                                                \
  template void squared_norm<T>(const T*, int64_t, double*, double*, cudaStream_t);                   \
  template void scale<T>(T*, int64_t, double, cudaStream_t);                                          \
  template void clamp<T>(T*, int64_t, double, double, cudaStream_t);                                  \
  template void add_bias_rows<T>(T*, const T*, int64_t, int64_t, cudaStream_t);

CREW_CUDA_INSTANTIATE(float)
CREW_CUDA_INSTANTIATE(double)

}  // namespace crew::cuda::launch
