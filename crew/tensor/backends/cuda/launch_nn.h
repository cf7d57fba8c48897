#pragma once
// The launchers of nn_kernels.cu: the kernels ResNet-18 and the GPT need beyond the seed's CNN
// (batch and layer norm, embedding, dropout, adaptive pooling, the attention mask + softmax,
// strided copies), on raw device pointers and a stream; nn_ops.cpp turns tensors into these
// calls. Every reduction runs in a fixed order (deterministic, no atomics on floats).
#include <cuda_runtime.h>

#include <cstdint>

#include "crew/tensor/backends/cuda/launch.h"

namespace crew::cuda::launch {

// ---- batch norm over [n, c, spatial]; per-channel statistics float64 [c] ----
template <typename T>
void bn_channel_sums(const T* x, const double* mean, double* out, int64_t n, int64_t c, int64_t spatial,
                     cudaStream_t s);  // mean null: sum x; else sum (x - mean)^2
template <typename T>
void bn_normalize(const T* x, const double* mean, const double* invstd, const double* scale, const T* bias,
                  T* y, int64_t n, int64_t c, int64_t spatial, cudaStream_t s);
template <typename T>
void bn_grad_sums(const T* g, const T* x, const double* mean, const double* invstd, double* sum_g,
                  double* sum_gx, int64_t n, int64_t c, int64_t spatial, cudaStream_t s);
template <typename T>
void bn_input_grad(const T* g, const T* x, const double* mean, const double* invstd, const double* scale,
                   const double* sum_g, const double* sum_gx, double count, bool training, T* gx, int64_t n,
                   int64_t c, int64_t spatial, cudaStream_t s);
template <typename T>
void bn_update_running(T* rm, T* rv, const double* mean, const double* var, double momentum, int64_t c,
                       cudaStream_t s);
// out[i] = 1 / sqrt(var[i] / count + eps), mean[i] = sum[i] / count (float64 [c]; in place ok).
void bn_finish_stats(double* mean_or_var, int64_t c, double divisor, double eps, bool invstd, cudaStream_t s);

// ---- layer norm over rows of cols (math/layer_norm_row.h) ----
template <typename T>
void ln_forward(const T* x, const T* w, const T* b, T* y, T* mean, T* var, int64_t rows, int64_t cols,
                double eps, cudaStream_t s);
template <typename T>
void ln_backward(const T* g, const T* x, const T* w, const T* mean, const T* var, T* dx, T* dw, T* db,
                 int64_t rows, int64_t cols, double eps, cudaStream_t s);

// ---- embedding; ids int64 (wide) or int32 ----
// *bad (device int64, preset to n): the first position whose id is outside [0, vocab).
template <typename T>
void embedding_forward(const void* ids, bool wide, const T* w, T* y, int64_t n, int64_t vocab, int64_t d,
                       int64_t padding, int64_t* bad, cudaStream_t s);
template <typename T>
void embedding_backward(const T* g, const void* ids, bool wide, T* dw, int64_t n, int64_t vocab, int64_t d,
                        int64_t padding, cudaStream_t s);

// ---- dropout's mask (math/dropout_stream.h) ----
template <typename T>
void dropout_mask(T* m, int64_t n, double p, uint64_t seed, cudaStream_t s);

// ---- adaptive average pooling of [nc, h, w] planes ----
template <typename T>
void adaptive_avg_pool(const T* x, T* y, int64_t nc, int64_t h, int64_t w, int64_t oh, int64_t ow,
                       cudaStream_t s);
template <typename T>
void adaptive_avg_pool_backward(const T* gy, T* gx, int64_t nc, int64_t h, int64_t w, int64_t oh, int64_t ow,
                                cudaStream_t s);

// ---- attention: in place on [matrices, tq, tk] scores: causal mask (keys after the query),
// then the row softmax ----
template <typename T>
void mask_softmax(T* s, int64_t matrices, int64_t tq, int64_t tk, bool causal, cudaStream_t st);

// ---- strided copies of elem_bytes-wide elements (1, 2, 4, 8) ----
// gather: dst[i] (contiguous over d.size) = src[base + sum coord * d.stride_a]
void gather_strided(const void* src, void* dst, int64_t n, int64_t base, const Dims& d, int elem_bytes,
                    cudaStream_t s);
// scatter: dst[base + sum coord * d.stride_a] = src[i] (contiguous over d.size)
void scatter_strided(const void* src, void* dst, int64_t n, int64_t base, const Dims& d, int elem_bytes,
                     cudaStream_t s);

}  // namespace crew::cuda::launch
