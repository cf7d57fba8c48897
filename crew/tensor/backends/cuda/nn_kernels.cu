// The CUDA backend's kernels for ResNet-18 and the GPT beyond the seed's CNN (launch_nn.h):
// batch and layer norm, embedding, dropout, adaptive pooling, the attention mask + softmax,
// strided copies. One file (nvcc runs once for all); per-row and per-element math is crew's
// CREW_HD functors where the CPU has them. Reductions are fixed-order (one block per channel
// with a fixed tree, or one thread per row / column), so results repeat bit for bit.
#include <cmath>
#include <cstdint>

#include "crew/tensor/backends/cuda/grid.cuh"
#include "crew/tensor/backends/cuda/launch_nn.h"
#include "crew/tensor/kernels/math/dropout_stream.h"
#include "crew/tensor/kernels/math/layer_norm_row.h"

namespace crew::cuda::launch {
namespace {

// Sum over the block's threads in a fixed tree; the result in thread 0.
__device__ double block_sum(double v, double* shared) {
  shared[threadIdx.x] = v;
  __syncthreads();
  for (unsigned stride = kT / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) shared[threadIdx.x] += shared[threadIdx.x + stride];
    __syncthreads();
  }
  return shared[0];
}

// ---- batch norm: one block per channel ----
template <typename T>
__global__ void bn_sums_k(const T* x, const double* mean, double* out, int64_t n, int64_t c, int64_t spatial) {
  __shared__ double shared[kT];
  const int64_t ch = blockIdx.x, per = n * spatial;
  const double m = mean ? mean[ch] : 0.0;
  double acc = 0;
  for (int64_t j = threadIdx.x; j < per; j += kT) {
    const double v = x[((j / spatial) * c + ch) * spatial + j % spatial];
    acc += mean ? (v - m) * (v - m) : v;
  }
  const double total = block_sum(acc, shared);
  if (threadIdx.x == 0) out[ch] = total;
}

template <typename T>
__global__ void bn_normalize_k(const T* x, const double* mean, const double* invstd, const double* scale,
                               const T* bias, T* y, int64_t total, int64_t c, int64_t spatial) {
  CREW_GRID_LOOP(i, total) {
    const int64_t ch = (i / spatial) % c;
    const T a = static_cast<T>(invstd[ch] * scale[ch]);
    const T b = static_cast<T>((bias ? static_cast<double>(bias[ch]) : 0.0) - mean[ch] * invstd[ch] * scale[ch]);
    y[i] = x[i] * a + b;
  }
}

template <typename T>
__global__ void bn_grad_sums_k(const T* g, const T* x, const double* mean, const double* invstd, double* sum_g,
                               double* sum_gx, int64_t n, int64_t c, int64_t spatial) {
  __shared__ double shared[kT];
  const int64_t ch = blockIdx.x, per = n * spatial;
  double ag = 0, agx = 0;
  for (int64_t j = threadIdx.x; j < per; j += kT) {
    const int64_t at = ((j / spatial) * c + ch) * spatial + j % spatial;
    const double gv = g[at];
    ag += gv;
    agx += gv * (x[at] - mean[ch]) * invstd[ch];
  }
  const double tg = block_sum(ag, shared);
  if (threadIdx.x == 0) sum_g[ch] = tg;
  __syncthreads();
  const double tgx = block_sum(agx, shared);
  if (threadIdx.x == 0) sum_gx[ch] = tgx;
}

template <typename T>
__global__ void bn_input_grad_k(const T* g, const T* x, const double* mean, const double* invstd,
                                const double* scale, const double* sum_g, const double* sum_gx, double count,
                                bool training, T* gx, int64_t total, int64_t c, int64_t spatial) {
  CREW_GRID_LOOP(i, total) {
    const int64_t ch = (i / spatial) % c;
    double v = g[i];
    if (training) {
      const double xhat = (x[i] - mean[ch]) * invstd[ch];
      v -= (sum_g[ch] + xhat * sum_gx[ch]) / count;
    }
    gx[i] = static_cast<T>(v * (scale[ch] * invstd[ch]));
  }
}

template <typename T>
__global__ void bn_update_running_k(T* rm, T* rv, const double* mean, const double* var, double momentum, int64_t c) {
  CREW_GRID_LOOP(ch, c) {
    rm[ch] = static_cast<T>(momentum * rm[ch] + (1 - momentum) * mean[ch]);
    rv[ch] = static_cast<T>(momentum * rv[ch] + (1 - momentum) * var[ch]);
  }
}

__global__ void bn_finish_k(double* v, int64_t c, double divisor, double eps, bool invstd) {
  CREW_GRID_LOOP(i, c) v[i] = invstd ? 1.0 / std::sqrt(v[i] / divisor + eps) : v[i] / divisor;
}

// ---- layer norm: one thread per row (forward, dx), one per column (dw, db) ----
template <typename T>
__global__ void ln_forward_k(const T* x, const T* w, const T* b, T* y, T* mean, T* var, int64_t rows, int64_t cols,
                             T eps) {
  using Row = kernels::math::LayerNormRow<T>;
  CREW_GRID_LOOP(r, rows) {
    T m, v;
    Row::stats(x + r * cols, cols, m, v);
    Row::normalize(x + r * cols, cols, m, Row::rstd(v, eps), w, b, y + r * cols);
    mean[r] = m, var[r] = v;
  }
}

template <typename T>
__global__ void ln_dx_k(const T* g, const T* x, const T* w, const T* mean, const T* var, T* dx, int64_t rows,
                        int64_t cols, T eps) {
  using Row = kernels::math::LayerNormRow<T>;
  CREW_GRID_LOOP(r, rows) {
    Row::backward(g + r * cols, x + r * cols, cols, mean[r], Row::rstd(var[r], eps), w, dx + r * cols, nullptr,
                  nullptr);
  }
}

template <typename T>
__global__ void ln_dw_k(const T* g, const T* x, const T* mean, const T* var, T* dw, T* db, int64_t rows,
                        int64_t cols, T eps) {
  using Row = kernels::math::LayerNormRow<T>;
  CREW_GRID_LOOP(c, cols) {
    T sw = 0, sb = 0;
    for (int64_t r = 0; r < rows; ++r) {
      const T gv = g[r * cols + c];
      sw += gv * (x[r * cols + c] - mean[r]) * Row::rstd(var[r], eps);
      sb += gv;
    }
    if (dw) dw[c] = sw;
    if (db) db[c] = sb;
  }
}

// ---- embedding ----
__device__ int64_t id_at(const void* ids, bool wide, int64_t i) {
  return wide ? static_cast<const int64_t*>(ids)[i] : static_cast<const int32_t*>(ids)[i];
}

template <typename T>
__global__ void embedding_k(const void* ids, bool wide, const T* w, T* y, int64_t n, int64_t vocab, int64_t d,
                            int64_t padding, int64_t* bad) {
  CREW_GRID_LOOP(i, n * d) {
    const int64_t pos = i / d, id = id_at(ids, wide, pos);
    if (id < 0 || id >= vocab) {
      atomicMin(reinterpret_cast<unsigned long long*>(bad), static_cast<unsigned long long>(pos));
      y[i] = T(0);
    } else {
      y[i] = id == padding ? T(0) : w[id * d + i % d];
    }
  }
}

// One thread per weight element scans the ids in order: deterministic, no atomics.
template <typename T>
__global__ void embedding_backward_k(const T* g, const void* ids, bool wide, T* dw, int64_t n, int64_t vocab,
                                     int64_t d, int64_t padding) {
  CREW_GRID_LOOP(i, vocab * d) {
    const int64_t row = i / d, col = i % d;
    T acc = 0;
    if (row != padding) {
      for (int64_t p = 0; p < n; ++p) {
        if (id_at(ids, wide, p) == row) acc += g[p * d + col];
      }
    }
    dw[i] = acc;
  }
}

// ---- dropout ----
template <typename T>
__global__ void dropout_k(T* m, int64_t n, double p, uint64_t seed, uint64_t threshold, T keep_scale) {
  const kernels::math::DropoutStream stream{seed};
  CREW_GRID_LOOP(i, n) m[i] = stream.keep(static_cast<uint64_t>(i), p, threshold) ? keep_scale : T(0);
}

// ---- adaptive average pooling (Paddle's bins) ----
__device__ int64_t bin_start(int64_t i, int64_t in, int64_t out) { return (i * in) / out; }
__device__ int64_t bin_end(int64_t i, int64_t in, int64_t out) { return ((i + 1) * in + out - 1) / out; }

template <typename T>
__global__ void adaptive_pool_k(const T* x, T* y, int64_t nc, int64_t h, int64_t w, int64_t oh, int64_t ow) {
  CREW_GRID_LOOP(i, nc * oh * ow) {
    const int64_t plane = i / (oh * ow), oy = (i / ow) % oh, ox = i % ow;
    const int64_t y0 = bin_start(oy, h, oh), y1 = bin_end(oy, h, oh);
    const int64_t x0 = bin_start(ox, w, ow), x1 = bin_end(ox, w, ow);
    T acc = 0;
    for (int64_t yy = y0; yy < y1; ++yy)
      for (int64_t xx = x0; xx < x1; ++xx) acc += x[(plane * h + yy) * w + xx];
    y[i] = acc / static_cast<T>((y1 - y0) * (x1 - x0));
  }
}

// Per input element: the bins that cover it, in output order.
template <typename T>
__global__ void adaptive_pool_backward_k(const T* gy, T* gx, int64_t nc, int64_t h, int64_t w, int64_t oh,
                                         int64_t ow) {
  CREW_GRID_LOOP(i, nc * h * w) {
    const int64_t plane = i / (h * w), yy = (i / w) % h, xx = i % w;
    T acc = 0;
    for (int64_t oy = 0; oy < oh; ++oy) {
      const int64_t y0 = bin_start(oy, h, oh), y1 = bin_end(oy, h, oh);
      if (yy < y0 || yy >= y1) continue;
      for (int64_t ox = 0; ox < ow; ++ox) {
        const int64_t x0 = bin_start(ox, w, ow), x1 = bin_end(ox, w, ow);
        if (xx < x0 || xx >= x1) continue;
        acc += gy[(plane * oh + oy) * ow + ox] / static_cast<T>((y1 - y0) * (x1 - x0));
      }
    }
    gx[i] = acc;
  }
}

// ---- attention mask + softmax: one thread per row ----
template <typename T>
__global__ void mask_softmax_k(T* s, int64_t rows, int64_t tq, int64_t tk, bool causal) {
  CREW_GRID_LOOP(r, rows) {
    T* row = s + r * tk;
    const int64_t i = r % tq, limit = causal ? (i + 1 < tk ? i + 1 : tk) : tk;
    T m = row[0];
    for (int64_t j = 1; j < limit; ++j) m = row[j] > m ? row[j] : m;
    T sum = 0;
    for (int64_t j = 0; j < limit; ++j) {
      row[j] = std::exp(row[j] - m);
      sum += row[j];
    }
    for (int64_t j = 0; j < limit; ++j) row[j] /= sum;
    for (int64_t j = limit; j < tk; ++j) row[j] = T(0);
  }
}

// ---- strided copies ----
__device__ int64_t strided_offset(int64_t i, const Dims& d) {
  int64_t off = 0;
  for (int ax = d.nd - 1; ax >= 0; --ax) {
    off += (i % d.size[ax]) * d.stride_a[ax];
    i /= d.size[ax];
  }
  return off;
}

template <typename E>
__global__ void gather_k(const E* src, E* dst, int64_t n, int64_t base, Dims d) {
  CREW_GRID_LOOP(i, n) dst[i] = src[base + strided_offset(i, d)];
}

template <typename E>
__global__ void scatter_k(const E* src, E* dst, int64_t n, int64_t base, Dims d) {
  CREW_GRID_LOOP(i, n) dst[base + strided_offset(i, d)] = src[i];
}

template <typename F>
void with_width(int bytes, F f) {
  switch (bytes) {
    case 1: f(uint8_t{}); break;
    case 2: f(uint16_t{}); break;
    case 4: f(uint32_t{}); break;
    default: f(uint64_t{}); break;
  }
}

}  // namespace

template <typename T>
void bn_channel_sums(const T* x, const double* mean, double* out, int64_t n, int64_t c, int64_t spatial,
                     cudaStream_t s) {
  if (c > 0) bn_sums_k<<<static_cast<unsigned>(c), kT, 0, s>>>(x, mean, out, n, c, spatial);
}
template <typename T>
void bn_normalize(const T* x, const double* mean, const double* invstd, const double* scale, const T* bias, T* y,
                  int64_t n, int64_t c, int64_t spatial, cudaStream_t s) {
  const int64_t total = n * c * spatial;
  bn_normalize_k<<<grid(total), kT, 0, s>>>(x, mean, invstd, scale, bias, y, total, c, spatial);
}
template <typename T>
void bn_grad_sums(const T* g, const T* x, const double* mean, const double* invstd, double* sum_g, double* sum_gx,
                  int64_t n, int64_t c, int64_t spatial, cudaStream_t s) {
  if (c > 0) bn_grad_sums_k<<<static_cast<unsigned>(c), kT, 0, s>>>(g, x, mean, invstd, sum_g, sum_gx, n, c, spatial);
}
template <typename T>
void bn_input_grad(const T* g, const T* x, const double* mean, const double* invstd, const double* scale,
                   const double* sum_g, const double* sum_gx, double count, bool training, T* gx, int64_t n,
                   int64_t c, int64_t spatial, cudaStream_t s) {
  const int64_t total = n * c * spatial;
  bn_input_grad_k<<<grid(total), kT, 0, s>>>(g, x, mean, invstd, scale, sum_g, sum_gx, count, training, gx, total, c,
                                              spatial);
}
template <typename T>
void bn_update_running(T* rm, T* rv, const double* mean, const double* var, double momentum, int64_t c,
                       cudaStream_t s) {
  bn_update_running_k<<<grid(c), kT, 0, s>>>(rm, rv, mean, var, momentum, c);
}
void bn_finish_stats(double* v, int64_t c, double divisor, double eps, bool invstd, cudaStream_t s) {
  bn_finish_k<<<grid(c), kT, 0, s>>>(v, c, divisor, eps, invstd);
}

template <typename T>
void ln_forward(const T* x, const T* w, const T* b, T* y, T* mean, T* var, int64_t rows, int64_t cols, double eps,
                cudaStream_t s) {
  ln_forward_k<<<grid(rows), kT, 0, s>>>(x, w, b, y, mean, var, rows, cols, static_cast<T>(eps));
}
template <typename T>
void ln_backward(const T* g, const T* x, const T* w, const T* mean, const T* var, T* dx, T* dw, T* db, int64_t rows,
                 int64_t cols, double eps, cudaStream_t s) {
  if (dx) ln_dx_k<<<grid(rows), kT, 0, s>>>(g, x, w, mean, var, dx, rows, cols, static_cast<T>(eps));
  if (dw || db) ln_dw_k<<<grid(cols), kT, 0, s>>>(g, x, mean, var, dw, db, rows, cols, static_cast<T>(eps));
}

template <typename T>
void embedding_forward(const void* ids, bool wide, const T* w, T* y, int64_t n, int64_t vocab, int64_t d,
                       int64_t padding, int64_t* bad, cudaStream_t s) {
  embedding_k<<<grid(n * d), kT, 0, s>>>(ids, wide, w, y, n, vocab, d, padding, bad);
}
template <typename T>
void embedding_backward(const T* g, const void* ids, bool wide, T* dw, int64_t n, int64_t vocab, int64_t d,
                        int64_t padding, cudaStream_t s) {
  embedding_backward_k<<<grid(vocab * d), kT, 0, s>>>(g, ids, wide, dw, n, vocab, d, padding);
}

template <typename T>
void dropout_mask(T* m, int64_t n, double p, uint64_t seed, cudaStream_t s) {
  const double keep_scale = p == 1.0 ? 0.0 : 1.0 / (1.0 - p);
  dropout_k<<<grid(n), kT, 0, s>>>(m, n, p, seed, kernels::math::DropoutStream::threshold(p),
                                   static_cast<T>(keep_scale));
}

template <typename T>
void adaptive_avg_pool(const T* x, T* y, int64_t nc, int64_t h, int64_t w, int64_t oh, int64_t ow, cudaStream_t s) {
  adaptive_pool_k<<<grid(nc * oh * ow), kT, 0, s>>>(x, y, nc, h, w, oh, ow);
}
template <typename T>
void adaptive_avg_pool_backward(const T* gy, T* gx, int64_t nc, int64_t h, int64_t w, int64_t oh, int64_t ow,
                                cudaStream_t s) {
  adaptive_pool_backward_k<<<grid(nc * h * w), kT, 0, s>>>(gy, gx, nc, h, w, oh, ow);
}

template <typename T>
void mask_softmax(T* s, int64_t matrices, int64_t tq, int64_t tk, bool causal, cudaStream_t st) {
  if (tk > 0) mask_softmax_k<<<grid(matrices * tq), kT, 0, st>>>(s, matrices * tq, tq, tk, causal);
}

void gather_strided(const void* src, void* dst, int64_t n, int64_t base, const Dims& d, int elem_bytes,
                    cudaStream_t s) {
  with_width(elem_bytes, [&](auto tag) {
    using E = decltype(tag);
    gather_k<E><<<grid(n), kT, 0, s>>>(static_cast<const E*>(src), static_cast<E*>(dst), n, base, d);
  });
}
void scatter_strided(const void* src, void* dst, int64_t n, int64_t base, const Dims& d, int elem_bytes,
                     cudaStream_t s) {
  with_width(elem_bytes, [&](auto tag) {
    using E = decltype(tag);
    scatter_k<E><<<grid(n), kT, 0, s>>>(static_cast<const E*>(src), static_cast<E*>(dst), n, base, d);
  });
}

#define CREW_NN_INSTANTIATE(T)                                                                                   \
  template void bn_channel_sums<T>(const T*, const double*, double*, int64_t, int64_t, int64_t, cudaStream_t);  \
  template void bn_normalize<T>(const T*, const double*, const double*, const double*, const T*, T*, int64_t,    \
                                int64_t, int64_t, cudaStream_t);                                                 \
  template void bn_grad_sums<T>(const T*, const T*, const double*, const double*, double*, double*, int64_t,     \
                                int64_t, int64_t, cudaStream_t);                                                 \
  template void bn_input_grad<T>(const T*, const T*, const double*, const double*, const double*, const double*, \
                                 const double*, double, bool, T*, int64_t, int64_t, int64_t, cudaStream_t);      \
  template void bn_update_running<T>(T*, T*, const double*, const double*, double, int64_t, cudaStream_t);       \
  template void ln_forward<T>(const T*, const T*, const T*, T*, T*, T*, int64_t, int64_t, double, cudaStream_t); \
  template void ln_backward<T>(const T*, const T*, const T*, const T*, const T*, T*, T*, T*, int64_t, int64_t,   \
                               double, cudaStream_t);                                                            \
  template void embedding_forward<T>(const void*, bool, const T*, T*, int64_t, int64_t, int64_t, int64_t,        \
                                     int64_t*, cudaStream_t);                                                    \
  template void embedding_backward<T>(const T*, const void*, bool, T*, int64_t, int64_t, int64_t, int64_t,       \
                                      cudaStream_t);                                                             \
  template void dropout_mask<T>(T*, int64_t, double, uint64_t, cudaStream_t);                                    \
  template void adaptive_avg_pool<T>(const T*, T*, int64_t, int64_t, int64_t, int64_t, int64_t, cudaStream_t);  \
  template void adaptive_avg_pool_backward<T>(const T*, T*, int64_t, int64_t, int64_t, int64_t, int64_t,         \
                                              cudaStream_t);                                                     \
  template void mask_softmax<T>(T*, int64_t, int64_t, int64_t, bool, cudaStream_t);
CREW_NN_INSTANTIATE(float)
CREW_NN_INSTANTIATE(double)

}  // namespace crew::cuda::launch
