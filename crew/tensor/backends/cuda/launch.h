#pragma once
// The launchers of the backend's own kernels (kernels.cu), on raw device pointers and a
// stream; the .cpp files of this folder turn tensors into these calls. Only nvcc compiles
// kernels.cu, so it stays free of crew's tensor headers (fast to compile) except the CREW_HD
// math of crew/tensor/kernels/math/.
#include <cuda_runtime.h>

#include <cstdint>

namespace crew::cuda::launch {

// Up to 8 axes; strides in elements (0 on a broadcast axis).
constexpr int kMaxDims = 8;
struct Dims {
  int nd = 0;
  int64_t size[kMaxDims] = {};
  int64_t stride_a[kMaxDims] = {};
  int64_t stride_b[kMaxDims] = {};
};

// Element types of fill and cast (crew's DType order).
enum class Elem { F32, F64, I32, I64, U8 };

void fill(void* p, Elem t, int64_t n, double value, cudaStream_t s);
void cast(const void* src, Elem st, void* dst, Elem dt, int64_t n, cudaStream_t s);

// ADD, SUB, MUL, DIV as crew::kernels::BinaryOp.
template <typename T>
void binary(int op, const T* a, const T* b, T* out, int64_t n, const Dims& d, cudaStream_t s);
// out[kept] = sum of g over the axes where stride_a (the output's strides over g's axes) is 0.
template <typename T>
void sum_to(const T* g, T* out, int64_t out_n, const Dims& d, cudaStream_t s);
template <typename T>
void affine(const T* a, T* y, int64_t n, double alpha, double beta, cudaStream_t s);
template <typename T>
void add_inplace(T* dst, const T* src, int64_t n, cudaStream_t s);
// EXP, LOG, POW, POW_GRAD as crew::kernels::UnaryOp.
template <typename T>
void unary(int op, const T* x, T* y, int64_t n, double exponent, cudaStream_t s);
// RELU, SIGMOID, TANH, GELU_ERF, GELU_TANH as crew::kernels::Activation.
template <typename T>
void activation_forward(int kind, const T* x, T* y, int64_t n, cudaStream_t s);
template <typename T>
void activation_backward(int kind, const T* gy, const T* x, const T* y, T* gx, int64_t n, cudaStream_t s);

// scale * sum over the middle axis of [outer, axis, inner], in axis order.
template <typename T>
void sum_axis(const T* x, T* y, int64_t outer, int64_t axis, int64_t inner, double scale, cudaStream_t s);
template <typename T>
void argmax(const T* x, int64_t* y, int64_t outer, int64_t axis, int64_t inner, cudaStream_t s);
// Softmax (or log-softmax) over the middle axis and its backward.
template <typename T>
void softmax_forward(const T* x, T* y, int64_t outer, int64_t axis, int64_t inner, bool log_out, cudaStream_t s);
template <typename T>
void softmax_backward(const T* gy, const T* y, T* gx, int64_t outer, int64_t axis, int64_t inner, bool log_out,
                      cudaStream_t s);

// Rows of k logits: loss per row, probabilities, and in *bad the first bad label's row + 1 (0
// when all are good); *counted += rows not ignored (both device int64).
template <typename T>
void cross_entropy_forward(const T* x, const int64_t* labels, T* loss, T* probs, int64_t rows, int64_t k,
                           int64_t* counted, int64_t* bad, cudaStream_t s);
// gx holds a copy of probs; grad per row (per_row) or gy[0] * scale.
template <typename T>
void cross_entropy_backward(T* gx, const int64_t* labels, const T* gy, int64_t rows, int64_t k, double scale,
                            bool per_row, cudaStream_t s);

// NCHW pooling; max pooling writes the argmax (index in the input plane) into ws.
struct Pool {
  int64_t n, c, h, w, oh, ow, kh, kw, sh, sw, ph, pw;
};
template <typename T>
void pool_forward(bool max, const T* x, T* y, int32_t* ws, const Pool& p, cudaStream_t s);
template <typename T>
void pool_backward(bool max, const T* gy, const int32_t* ws, T* gx, const Pool& p, cudaStream_t s);

// Optimizer steps (math/adam_step.h, math/sgd_step.h).
template <typename T>
void sgd(T* p, const T* g, int64_t n, double lr, double l2, cudaStream_t s);
template <typename T>
void momentum(T* p, const T* g, T* v, int64_t n, double lr, double mu, double l2, bool nesterov, cudaStream_t s);
template <typename T>
void adam(T* p, const T* g, T* m1, T* m2, int64_t n, double beta1, double beta2, double lr_t, double eps_t,
          double l2, double decay, cudaStream_t s);

// Sum of squares in double, in a fixed order (fixed grid, then one block): *out on the device.
template <typename T>
void squared_norm(const T* g, int64_t n, double* partials, double* out, cudaStream_t s);
constexpr int kNormBlocks = 256;
template <typename T>
void scale(T* g, int64_t n, double factor, cudaStream_t s);
template <typename T>
void clamp(T* g, int64_t n, double lo, double hi, cudaStream_t s);
// y[r, c] += bias[c] for rows x cols.
template <typename T>
void add_bias_rows(T* y, const T* bias, int64_t rows, int64_t cols, cudaStream_t s);

}  // namespace crew::cuda::launch
