// The CUDA entries of the kernels under autograd's ops, nn's functions and the optimizers:
// tensors in, launch.h's kernels on the device's compute stream, tensors out (float32 and
// float64; other dtypes say so).
#include <cstring>
#include <tuple>
#include <vector>

#include "crew/core/check.h"
#include "crew/tensor/backends/cuda/launch.h"
#include "crew/tensor/backends/cuda/on_device.h"
#include "crew/tensor/backends/cuda/runtime.h"
#include "crew/tensor/kernels/activation.h"
#include "crew/tensor/kernels/broadcast.h"
#include "crew/tensor/kernels/bucket_copy.h"
#include "crew/tensor/kernels/cross_entropy.h"
#include "crew/tensor/kernels/elementwise.h"
#include "crew/tensor/kernels/fill_cast.h"
#include "crew/tensor/kernels/grad_clip.h"
#include "crew/tensor/kernels/optimizer_update.h"
#include "crew/tensor/kernels/pool.h"
#include "crew/tensor/kernels/reduce.h"
#include "crew/tensor/kernels/softmax.h"
#include "crew/tensor/tensor.h"

namespace crew::cuda {
namespace {


launch::Elem elem_of(DType t) {
  switch (t) {
    case DType::FLOAT32: return launch::Elem::F32;
    case DType::FLOAT64: return launch::Elem::F64;
    case DType::INT32: return launch::Elem::I32;
    case DType::INT64: return launch::Elem::I64;
    case DType::UINT8: return launch::Elem::U8;
  }
  CREW_THROW(DeviceError, "gpu kernels: dtype ", static_cast<int>(t), " is not supported");
}

Tensor new_like(const Shape& shape, DType dtype, const Tensor& like) {
  return Tensor::uninitialized(shape, dtype, like.place());
}

// Bytes from the device to the host (waits for the stream).
void to_host(void* dst, const void* src, size_t bytes, const On& on) {
  CREW_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, on.stream), on.op, on.device);
  CREW_CUDA_CHECK(cudaStreamSynchronize(on.stream), on.op, on.device);
}

// ---- fill, cast ----
void fill_gpu(const Tensor& t, double value) {
  On on(t, "fill");
  launch::fill(t.device_data(), elem_of(t.dtype()), t.numel(), value, on.stream);
  on.check();
}

void cast_gpu(const Tensor& src, const Tensor& dst) {
  On on(dst, "cast");
  launch::cast(src.device_data(), elem_of(src.dtype()), dst.device_data(), elem_of(dst.dtype()), src.numel(),
               on.stream);
  on.check();
}

// ---- broadcast ----
launch::Dims broadcast_dims(const Shape& out, const Shape& a, const Shape& b, const char* op) {
  launch::Dims d;
  CREW_CHECK_T(DeviceError, out.size() <= static_cast<size_t>(launch::kMaxDims), op, ": gpu kernels take at most ",
               launch::kMaxDims, " axes, got ", out.size());
  d.nd = static_cast<int>(out.size());
  auto strides = [&](const Shape& s, int64_t* st) {
    int64_t acc = 1;
    const int64_t shift = static_cast<int64_t>(out.size() - s.size());
    for (int64_t ax = static_cast<int64_t>(out.size()) - 1; ax >= 0; --ax) {
      const int64_t i = ax - shift;
      if (i < 0) {
        st[ax] = 0;
        continue;
      }
      const int64_t e = s[static_cast<size_t>(i)];
      st[ax] = e == 1 && out[static_cast<size_t>(ax)] != 1 ? 0 : acc;
      acc *= e;
    }
  };
  for (size_t i = 0; i < out.size(); ++i) d.size[i] = out[i];
  strides(a, d.stride_a);
  strides(b, d.stride_b);
  return d;
}

Tensor binary_gpu(kernels::BinaryOp op, const Tensor& a, const Tensor& b, const Shape& out) {
  On on(a, "binary");
  Tensor y = new_like(out, a.dtype(), a);
  const launch::Dims d = broadcast_dims(out, a.shape(), b.shape(), "binary");
  floating("binary", a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    launch::binary<T>(static_cast<int>(op), ptr<T>(a), ptr<T>(b), ptr<T>(y), y.numel(), d, on.stream);
  });
  on.check();
  return y;
}

Tensor sum_to_gpu(const Tensor& g, const Shape& shape) {
  On on(g, "sum_to");
  Tensor y = new_like(shape, g.dtype(), g);
  // stride_a: the output's strides over g's axes (0 where summed)
  const launch::Dims d = broadcast_dims(g.shape(), shape, g.shape(), "sum_to");
  floating("sum_to", g.dtype(), [&](auto tag) {
    using T = decltype(tag);
    launch::sum_to<T>(ptr<T>(g), ptr<T>(y), y.numel(), d, on.stream);
  });
  on.check();
  return y;
}

Tensor affine_gpu(const Tensor& a, double alpha, double beta) {
  On on(a, "affine");
  Tensor y = new_like(a.shape(), a.dtype(), a);
  floating("affine", a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    launch::affine<T>(ptr<T>(a), ptr<T>(y), a.numel(), alpha, beta, on.stream);
  });
  on.check();
  return y;
}

void add_inplace_gpu(const Tensor& dst, const Tensor& src) {
  On on(dst, "add_inplace");
  floating("add_inplace", dst.dtype(), [&](auto tag) {
    using T = decltype(tag);
    launch::add_inplace<T>(ptr<T>(dst), ptr<T>(src), dst.numel(), on.stream);
  });
  on.check();
}

Tensor unary_gpu(kernels::UnaryOp op, const Tensor& x, double exponent) {
  On on(x, "unary");
  Tensor y = new_like(x.shape(), x.dtype(), x);
  floating("unary", x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    launch::unary<T>(static_cast<int>(op), ptr<T>(x), ptr<T>(y), x.numel(), exponent, on.stream);
  });
  on.check();
  return y;
}

// ---- activations ----
Tensor activation_forward_gpu(kernels::Activation kind, const Tensor& x) {
  On on(x, "activation");
  Tensor y = new_like(x.shape(), x.dtype(), x);
  floating("activation", x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    launch::activation_forward<T>(static_cast<int>(kind), ptr<T>(x), ptr<T>(y), x.numel(), on.stream);
  });
  on.check();
  return y;
}

Tensor activation_backward_gpu(kernels::Activation kind, const Tensor& gy, const Tensor& x, const Tensor& y,
                               bool in_place) {
  On on(gy, "activation backward");
  Tensor gx = in_place ? gy : new_like(gy.shape(), gy.dtype(), gy);
  floating("activation backward", gy.dtype(), [&](auto tag) {
    using T = decltype(tag);
    launch::activation_backward<T>(static_cast<int>(kind), ptr<T>(gy), x.defined() ? ptr<T>(x) : nullptr,
                                   y.defined() ? ptr<T>(y) : nullptr, ptr<T>(gx), gy.numel(), on.stream);
  });
  on.check();
  return gx;
}

// ---- reductions, softmax ----
struct Split {
  int64_t outer = 1, axis = 1, inner = 1;
};
Split split(const Shape& s, int64_t a) {
  Split p;
  for (int64_t i = 0; i < static_cast<int64_t>(s.size()); ++i) {
    const int64_t e = s[static_cast<size_t>(i)];
    if (i < a) p.outer *= e;
    else if (i == a) p.axis = e;
    else p.inner *= e;
  }
  return p;
}
Shape reduced(const Shape& s, int64_t a, bool keepdim) {
  Shape r = s;
  if (keepdim) r[static_cast<size_t>(a)] = 1;
  else r.erase(r.begin() + a);
  return r;
}

Tensor sum_axis_gpu(const Tensor& x, int64_t axis, bool keepdim, double scale) {
  On on(x, "sum_axis");
  const Split p = split(x.shape(), axis);
  Tensor y = new_like(reduced(x.shape(), axis, keepdim), x.dtype(), x);
  floating("sum_axis", x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    launch::sum_axis<T>(ptr<T>(x), ptr<T>(y), p.outer, p.axis, p.inner, scale, on.stream);
  });
  on.check();
  return y;
}

Tensor argmax_gpu(const Tensor& x, int64_t axis) {
  On on(x, "argmax");
  const Split p = split(x.shape(), axis);
  Tensor y = new_like(reduced(x.shape(), axis, false), DType::INT64, x);
  floating("argmax", x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    launch::argmax<T>(ptr<T>(x), ptr<int64_t>(y), p.outer, p.axis, p.inner, on.stream);
  });
  on.check();
  return y;
}

Tensor softmax_forward_gpu(const Tensor& x, int64_t axis, bool log_out) {
  On on(x, "softmax");
  const Split p = split(x.shape(), axis);
  Tensor y = new_like(x.shape(), x.dtype(), x);
  floating("softmax", x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    launch::softmax_forward<T>(ptr<T>(x), ptr<T>(y), p.outer, p.axis, p.inner, log_out, on.stream);
  });
  on.check();
  return y;
}

Tensor softmax_backward_gpu(const Tensor& gy, const Tensor& y, int64_t axis, bool log_out) {
  On on(gy, "softmax backward");
  const Split p = split(y.shape(), axis);
  Tensor gx = new_like(y.shape(), y.dtype(), y);
  floating("softmax backward", y.dtype(), [&](auto tag) {
    using T = decltype(tag);
    launch::softmax_backward<T>(ptr<T>(gy), ptr<T>(y), ptr<T>(gx), p.outer, p.axis, p.inner, log_out, on.stream);
  });
  on.check();
  return gx;
}

// ---- cross entropy ----
std::tuple<Tensor, Tensor, int64_t> cross_entropy_forward_gpu(const Tensor& logits, const Tensor& labels) {
  On on(logits, "cross_entropy");
  const int64_t k = logits.size(-1);
  const Shape rows_shape(logits.shape().begin(), logits.shape().end() - 1);
  const int64_t rows = shape_numel(rows_shape);
  Tensor loss = Tensor::zeros(rows_shape, logits.dtype(), logits.place());
  Tensor probs = new_like(logits.shape(), logits.dtype(), logits);
  // [counted, first bad row]; "no bad row" is the largest value (atomicMin).
  Tensor flags = Tensor::uninitialized({2}, DType::INT64, logits.place());
  const int64_t init[2] = {0, -1};
  CREW_CUDA_CHECK(cudaMemcpyAsync(flags.device_data(), init, sizeof(init), cudaMemcpyHostToDevice, on.stream),
                  on.op, on.device);
  floating("cross_entropy", logits.dtype(), [&](auto tag) {
    using T = decltype(tag);
    launch::cross_entropy_forward<T>(ptr<T>(logits), ptr<int64_t>(labels), ptr<T>(loss), ptr<T>(probs), rows, k,
                                     ptr<int64_t>(flags), ptr<int64_t>(flags) + 1, on.stream);
  });
  on.check();
  int64_t host[2];
  to_host(host, flags.device_data(), sizeof(host), on);
  if (host[1] != -1) {
    int64_t bad_label = 0;
    to_host(&bad_label, ptr<int64_t>(labels) + host[1], sizeof(bad_label), on);
    CREW_THROW(IndexError, "cross_entropy: label ", bad_label, " at row ", host[1], " is outside [0, ", k, ")");
  }
  return {loss, probs, host[0]};
}

Tensor cross_entropy_backward_gpu(const Tensor& probs, const Tensor& labels, const Tensor& gy, double scale,
                                  bool per_row) {
  On on(probs, "cross_entropy backward");
  Tensor gx = probs.clone();
  const int64_t k = probs.size(-1), rows = k == 0 ? 0 : probs.numel() / k;
  floating("cross_entropy backward", probs.dtype(), [&](auto tag) {
    using T = decltype(tag);
    launch::cross_entropy_backward<T>(ptr<T>(gx), ptr<int64_t>(labels), ptr<T>(gy), rows, k, scale, per_row,
                                      on.stream);
  });
  on.check();
  return gx;
}

// ---- pooling ----
launch::Pool pool_geometry(const Shape& x, const kernels::Pool2dParams& p) {
  const Shape y = kernels::pool2d_output_shape(x, p);
  return launch::Pool{x[0], x[1], x[2], x[3], y[2], y[3], p.kernel[0], p.kernel[1],
                      p.stride[0], p.stride[1], p.padding[0], p.padding[1]};
}

std::tuple<Tensor, Tensor, std::shared_ptr<const OpaqueLayout>> pool_forward_gpu(kernels::PoolKind kind,
                                                                                 const Tensor& x,
                                                                                 const kernels::Pool2dParams& p,
                                                                                 bool with_workspace,
                                                                                 kernels::PoolImpl) {
  On on(x, "pool2d");
  const launch::Pool g = pool_geometry(x.shape(), p);
  Tensor y = new_like({g.n, g.c, g.oh, g.ow}, x.dtype(), x);
  const bool max = kind == kernels::PoolKind::MAX;
  Tensor ws = max && with_workspace ? new_like({g.n, g.c, g.oh, g.ow}, DType::INT32, x) : Tensor();
  floating("pool2d", x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    launch::pool_forward<T>(max, ptr<T>(x), ptr<T>(y), ws.defined() ? ptr<int32_t>(ws) : nullptr, g, on.stream);
  });
  on.check();
  return {y, ws, nullptr};
}

Tensor pool_backward_gpu(kernels::PoolKind kind, const Tensor& gy, const Shape& x_shape, const Tensor& ws,
                         const kernels::Pool2dParams& p, kernels::PoolImpl,
                         const std::shared_ptr<const OpaqueLayout>&) {
  On on(gy, "pool2d backward");
  const bool max = kind == kernels::PoolKind::MAX;
  CREW_CHECK_T(DeviceError, !max || (ws.defined() && ws.place() == gy.place()),
               "pool2d backward: max pooling needs the gpu forward's workspace");
  const launch::Pool g = pool_geometry(x_shape, p);
  Tensor gx = new_like(x_shape, gy.dtype(), gy);
  floating("pool2d backward", gy.dtype(), [&](auto tag) {
    using T = decltype(tag);
    launch::pool_backward<T>(max, ptr<T>(gy), max ? ptr<int32_t>(ws) : nullptr, ptr<T>(gx), g, on.stream);
  });
  on.check();
  return gx;
}

// ---- optimizers, clipping ----
void sgd_gpu(const Tensor& param, const Tensor& grad, double lr, double l2) {
  On on(param, "sgd_update");
  floating("sgd_update", param.dtype(), [&](auto tag) {
    using T = decltype(tag);
    launch::sgd<T>(ptr<T>(param), ptr<T>(grad), param.numel(), lr, l2, on.stream);
  });
  on.check();
}

void momentum_gpu(const Tensor& param, const Tensor& grad, const Tensor& v, const kernels::MomentumCoefficients& c) {
  On on(param, "momentum_update");
  floating("momentum_update", param.dtype(), [&](auto tag) {
    using T = decltype(tag);
    launch::momentum<T>(ptr<T>(param), ptr<T>(grad), ptr<T>(v), param.numel(), c.lr, c.momentum, c.l2, c.nesterov,
                        on.stream);
  });
  on.check();
}

void adam_gpu(const Tensor& param, const Tensor& grad, const Tensor& m1, const Tensor& m2,
              const kernels::AdamCoefficients& c) {
  On on(param, "adam_update");
  floating("adam_update", param.dtype(), [&](auto tag) {
    using T = decltype(tag);
    launch::adam<T>(ptr<T>(param), ptr<T>(grad), ptr<T>(m1), ptr<T>(m2), param.numel(), c.beta1, c.beta2, c.lr_t,
                    c.eps_t, c.l2, c.decay_scale, on.stream);
  });
  on.check();
}

double squared_norm_gpu(const Tensor& g) {
  On on(g, "squared_norm");
  Tensor scratch = Tensor::uninitialized({launch::kNormBlocks + 1}, DType::FLOAT64, g.place());
  double* s = ptr<double>(scratch);
  floating("squared_norm", g.dtype(), [&](auto tag) {
    using T = decltype(tag);
    launch::squared_norm<T>(ptr<T>(g), g.numel(), s, s + launch::kNormBlocks, on.stream);
  });
  on.check();
  double out = 0;
  to_host(&out, s + launch::kNormBlocks, sizeof(out), on);
  return out;
}

void scale_gpu(const Tensor& g, double factor) {
  On on(g, "scale_");
  floating("scale_", g.dtype(), [&](auto tag) {
    using T = decltype(tag);
    launch::scale<T>(ptr<T>(g), g.numel(), factor, on.stream);
  });
  on.check();
}

void clamp_gpu(const Tensor& g, double lo, double hi) {
  On on(g, "clamp_");
  floating("clamp_", g.dtype(), [&](auto tag) {
    using T = decltype(tag);
    launch::clamp<T>(ptr<T>(g), g.numel(), lo, hi, on.stream);
  });
  on.check();
}

// ---- bucket copies (DataParallel) ----
void pack_flat_gpu(const std::vector<Tensor>& parts, const Tensor& flat, int64_t offset) {
  On on(flat, "pack_flat");
  char* dst = static_cast<char*>(flat.device_data()) + offset * static_cast<int64_t>(dtype_size(flat.dtype()));
  for (const Tensor& t : parts) {
    const size_t bytes = t.nbytes();
    if (bytes)
      CREW_CUDA_CHECK(cudaMemcpyAsync(dst, t.device_data(), bytes, cudaMemcpyDeviceToDevice, on.stream), on.op,
                      on.device);
    dst += bytes;
  }
}

void unpack_flat_gpu(const Tensor& flat, int64_t offset, const std::vector<Tensor>& parts) {
  On on(flat, "unpack_flat");
  const char* src =
      static_cast<const char*>(flat.device_data()) + offset * static_cast<int64_t>(dtype_size(flat.dtype()));
  for (const Tensor& t : parts) {
    const size_t bytes = t.nbytes();
    if (bytes)
      CREW_CUDA_CHECK(cudaMemcpyAsync(t.device_data(), src, bytes, cudaMemcpyDeviceToDevice, on.stream), on.op,
                      on.device);
    src += bytes;
  }
}

}  // namespace

// Shared with blas.cpp: y[r, :] += bias for a [rows, cols] tensor.
void add_bias_rows(const Tensor& y, const Tensor& bias, int64_t rows, int64_t cols) {
  On on(y, "linear bias");
  floating("linear", y.dtype(), [&](auto tag) {
    using T = decltype(tag);
    launch::add_bias_rows<T>(ptr<T>(y), ptr<T>(bias), rows, cols, on.stream);
  });
  on.check();
}

void register_elementwise_kernels() {
  constexpr DeviceType G = DeviceType::GPU;
  kernels::fill_kernel.set(G, &fill_gpu);
  kernels::cast_kernel.set(G, &cast_gpu);
  kernels::binary_kernel.set(G, &binary_gpu);
  kernels::sum_to_kernel.set(G, &sum_to_gpu);
  kernels::affine_kernel.set(G, &affine_gpu);
  kernels::add_inplace_kernel.set(G, &add_inplace_gpu);
  kernels::unary_kernel.set(G, &unary_gpu);
  kernels::sum_axis_kernel.set(G, &sum_axis_gpu);
  kernels::argmax_kernel.set(G, &argmax_gpu);
  kernels::sgd_update_kernel.set(G, &sgd_gpu);
  kernels::momentum_update_kernel.set(G, &momentum_gpu);
  kernels::adam_update_kernel.set(G, &adam_gpu);
  kernels::squared_norm_kernel.set(G, &squared_norm_gpu);
  kernels::scale_kernel.set(G, &scale_gpu);
  kernels::clamp_kernel.set(G, &clamp_gpu);
  kernels::pack_flat_kernel.set(G, &pack_flat_gpu);
  kernels::unpack_flat_kernel.set(G, &unpack_flat_gpu);
}

void register_nn_kernels() {
  constexpr DeviceType G = DeviceType::GPU;
  kernels::activation_forward_kernel.set(G, &activation_forward_gpu);
  kernels::activation_backward_kernel.set(G, &activation_backward_gpu);
  kernels::softmax_forward_kernel.set(G, &softmax_forward_gpu);
  kernels::softmax_backward_kernel.set(G, &softmax_backward_gpu);
  kernels::cross_entropy_forward_kernel.set(G, &cross_entropy_forward_gpu);
  kernels::cross_entropy_backward_kernel.set(G, &cross_entropy_backward_gpu);
  kernels::pool2d_forward_kernel.set(G, &pool_forward_gpu);
  kernels::pool2d_backward_kernel.set(G, &pool_backward_gpu);
}

}  // namespace crew::cuda
