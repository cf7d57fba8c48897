// The CUDA entries of the kernels ResNet-18 and the GPT need beyond the seed's CNN: batch norm
// (its loops, and the fused forward/backward built from them), layer norm, embedding, dropout,
// adaptive average pooling, attention (cuBLASLt products around the mask + softmax kernel),
// permute/slice/concat copies. Tensors in, launch_nn.h's kernels on the compute stream.
#include <vector>

#include "crew/core/check.h"
#include "crew/tensor/backends/cuda/launch_nn.h"
#include "crew/tensor/backends/cuda/on_device.h"
#include "crew/tensor/backends/cuda/runtime.h"
#include "crew/tensor/kernels/adaptive_pool.h"
#include "crew/tensor/kernels/attention.h"
#include "crew/tensor/kernels/batch_norm.h"
#include "crew/tensor/kernels/batch_norm_loops.h"
#include "crew/tensor/kernels/broadcast.h"
#include "crew/tensor/kernels/copy_strided.h"
#include "crew/tensor/kernels/dropout.h"
#include "crew/tensor/kernels/embedding.h"
#include "crew/tensor/kernels/gemm.h"
#include "crew/tensor/kernels/layer_norm.h"
#include "crew/tensor/kernels/softmax.h"
#include "crew/tensor/tensor.h"

namespace crew::cuda {
namespace {

Tensor like(const Shape& s, DType d, const Tensor& t) { return Tensor::uninitialized(s, d, t.place()); }

// [n, c, spatial] of an [N, C, ...] tensor.
struct Nc {
  int64_t n = 1, c = 1, spatial = 1;
};
Nc nc_of(const Tensor& x) {
  Nc l{x.size(0), x.size(1), 1};
  for (int64_t d = 2; d < x.dim(); ++d) l.spatial *= x.size(d);
  return l;
}

// ---- batch norm loops ----
Tensor bn_sums(const Tensor& x, const Tensor& mean, const char* op) {
  On on(x, op);
  const Nc l = nc_of(x);
  Tensor out = like({l.c}, DType::FLOAT64, x);
  floating(op, x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    launch::bn_channel_sums<T>(ptr<T>(x), ptr<double>(mean), ptr<double>(out), l.n, l.c, l.spatial,
                               on.stream);
  });
  on.check();
  return out;
}
Tensor channel_sums_gpu(const Tensor& x) { return bn_sums(x, Tensor(), "batch_norm_channel_sums"); }
Tensor channel_sq_dev_gpu(const Tensor& x, const Tensor& mean) {
  return bn_sums(x, mean, "batch_norm_channel_sq_dev");
}

Tensor normalize_gpu(const Tensor& x, const Tensor& mean, const Tensor& invstd, const Tensor& scale,
                     const Tensor& bias) {
  On on(x, "batch_norm_normalize");
  const Nc l = nc_of(x);
  Tensor y = like(x.shape(), x.dtype(), x);
  floating(on.op, x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    launch::bn_normalize<T>(ptr<T>(x), ptr<double>(mean), ptr<double>(invstd), ptr<double>(scale),
                            ptr<T>(bias), ptr<T>(y), l.n, l.c, l.spatial, on.stream);
  });
  on.check();
  return y;
}

std::pair<Tensor, Tensor> grad_sums_gpu(const Tensor& g, const Tensor& x, const Tensor& mean,
                                        const Tensor& invstd) {
  On on(x, "batch_norm_grad_sums");
  const Nc l = nc_of(x);
  Tensor sg = like({l.c}, DType::FLOAT64, x), sgx = like({l.c}, DType::FLOAT64, x);
  floating(on.op, x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    launch::bn_grad_sums<T>(ptr<T>(g), ptr<T>(x), ptr<double>(mean), ptr<double>(invstd), ptr<double>(sg),
                            ptr<double>(sgx), l.n, l.c, l.spatial, on.stream);
  });
  on.check();
  return {sg, sgx};
}

Tensor input_grad_gpu(const Tensor& g, const Tensor& x, const Tensor& mean, const Tensor& invstd,
                      const Tensor& scale, const Tensor& sum_g, const Tensor& sum_gx, double count,
                      bool training) {
  On on(x, "batch_norm_input_grad");
  const Nc l = nc_of(x);
  Tensor gx = like(x.shape(), x.dtype(), x);
  floating(on.op, x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    launch::bn_input_grad<T>(ptr<T>(g), ptr<T>(x), ptr<double>(mean), ptr<double>(invstd), ptr<double>(scale),
                             ptr<double>(sum_g), ptr<double>(sum_gx), count, training, ptr<T>(gx), l.n, l.c,
                             l.spatial, on.stream);
  });
  on.check();
  return gx;
}

void update_running_gpu(const Tensor& rm, const Tensor& rv, const Tensor& mean, const Tensor& var,
                        double momentum) {
  On on(rm, "batch_norm_update_running");
  floating(on.op, rm.dtype(), [&](auto tag) {
    using T = decltype(tag);
    launch::bn_update_running<T>(ptr<T>(rm), ptr<T>(rv), ptr<double>(mean), ptr<double>(var), momentum,
                                 rm.numel(), on.stream);
  });
  on.check();
}

// ---- batch norm forward / backward (training) from the loops: (y, mean, variance) ----
// mean and biased variance float64 [C] on the device, and invstd.
struct BnStats {
  Tensor mean, var, invstd;
};
BnStats bn_stats(const Tensor& x, double epsilon, const On& on) {
  const Nc l = nc_of(x);
  const double count = static_cast<double>(l.n * l.spatial);
  BnStats s;
  s.mean = channel_sums_gpu(x);
  launch::bn_finish_stats(ptr<double>(s.mean), l.c, count, 0, false, on.stream);
  s.var = channel_sq_dev_gpu(x, s.mean);
  s.invstd = s.var.clone();
  launch::bn_finish_stats(ptr<double>(s.var), l.c, count, 0, false, on.stream);
  launch::bn_finish_stats(ptr<double>(s.invstd), l.c, count, epsilon, true, on.stream);
  on.check();
  return s;
}

Tensor scale_of(const Tensor& weight, int64_t c, const Tensor& x) {
  return weight.defined() ? weight.to(DType::FLOAT64) : Tensor::ones({c}, DType::FLOAT64, x.place());
}

std::tuple<Tensor, Tensor, Tensor> bn_forward_gpu(const Tensor& x, const Tensor& weight, const Tensor& bias,
                                                  double epsilon) {
  On on(x, "batch_norm");
  const BnStats s = bn_stats(x, epsilon, on);
  Tensor y = normalize_gpu(x, s.mean, s.invstd, scale_of(weight, x.size(1), x), bias);
  return {y, s.mean.to(x.dtype()), s.var.to(x.dtype())};
}

std::tuple<Tensor, Tensor, Tensor> bn_backward_gpu(const Tensor& g, const Tensor& x, const Tensor& weight,
                                                   const Tensor& bias, double epsilon, const Tensor& mean,
                                                   const Tensor& variance) {
  On on(x, "batch_norm backward");
  const Nc l = nc_of(x);
  Tensor m = mean.to(DType::FLOAT64), invstd = variance.to(DType::FLOAT64);
  launch::bn_finish_stats(ptr<double>(invstd), l.c, 1.0, epsilon, true, on.stream);
  on.check();
  auto [sum_g, sum_gx] = grad_sums_gpu(g, x, m, invstd);
  Tensor gx = input_grad_gpu(g, x, m, invstd, scale_of(weight, l.c, x), sum_g, sum_gx,
                             static_cast<double>(l.n * l.spatial), true);
  return {gx, weight.defined() ? sum_gx.to(x.dtype()) : Tensor(),
          bias.defined() ? sum_g.to(x.dtype()) : Tensor()};
}

// ---- layer norm ----
std::tuple<Tensor, Tensor, Tensor> ln_forward_gpu(const Tensor& x, int64_t rows, int64_t cols,
                                                  const Tensor& weight, const Tensor& bias, double epsilon) {
  On on(x, "layer_norm");
  Tensor y = like(x.shape(), x.dtype(), x), mean = like({rows}, x.dtype(), x),
         var = like({rows}, x.dtype(), x);
  floating(on.op, x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    launch::ln_forward<T>(ptr<T>(x), ptr<T>(weight), ptr<T>(bias), ptr<T>(y), ptr<T>(mean), ptr<T>(var), rows,
                          cols, epsilon, on.stream);
  });
  on.check();
  return {y, mean, var};
}

std::tuple<Tensor, Tensor, Tensor> ln_backward_gpu(const Tensor& g, const Tensor& x, int64_t rows,
                                                   int64_t cols, const Tensor& weight, const Tensor& bias,
                                                   double epsilon, const Tensor& mean,
                                                   const Tensor& variance) {
  On on(x, "layer_norm backward");
  Tensor dx = like(x.shape(), x.dtype(), x);
  Tensor dw = weight.defined() ? like({cols}, x.dtype(), x) : Tensor();
  Tensor db = bias.defined() ? like({cols}, x.dtype(), x) : Tensor();
  floating(on.op, x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    launch::ln_backward<T>(ptr<T>(g), ptr<T>(x), ptr<T>(weight), ptr<T>(mean), ptr<T>(variance), ptr<T>(dx),
                           ptr<T>(dw), ptr<T>(db), rows, cols, epsilon, on.stream);
  });
  on.check();
  return {dx, dw, db};
}

// ---- embedding ----
bool wide_ids(const Tensor& ids, const char* op) {
  CREW_CHECK_T(DTypeError, ids.dtype() == DType::INT64 || ids.dtype() == DType::INT32, op,
               ": ids must be int64 or int32, got ", dtype_name(ids.dtype()));
  return ids.dtype() == DType::INT64;
}

Tensor embedding_forward_gpu(const Tensor& ids, const Tensor& weight, int64_t padding_idx) {
  On on(weight, "embedding");
  const bool wide = wide_ids(ids, on.op);
  const int64_t n = ids.numel(), vocab = weight.size(0), d = weight.size(1);
  Shape out = ids.shape();
  out.push_back(d);
  Tensor y = like(out, weight.dtype(), weight);
  if (n == 0) return y;
  Tensor bad = Tensor::full({1}, static_cast<double>(n), DType::INT64, weight.place());
  floating(on.op, weight.dtype(), [&](auto tag) {
    using T = decltype(tag);
    launch::embedding_forward<T>(ids.device_data(), wide, ptr<T>(weight), ptr<T>(y), n, vocab, d, padding_idx,
                                 ptr<int64_t>(bad), on.stream);
  });
  on.check();
  const auto first_bad = static_cast<int64_t>(bad.cpu().item());
  if (first_bad < n) {
    const Tensor host = ids.cpu();
    const int64_t id = wide ? host.to_vector<int64_t>()[static_cast<size_t>(first_bad)]
                            : host.to_vector<int32_t>()[static_cast<size_t>(first_bad)];
    CREW_THROW(IndexError, "embedding: id ", id, " at position ", first_bad, " is outside [0, ", vocab,
               ") (num_embeddings V = ", vocab, ")");
  }
  return y;
}

Tensor embedding_backward_gpu(const Tensor& g, const Tensor& ids, int64_t vocab, int64_t padding_idx) {
  On on(g, "embedding backward");
  const bool wide = wide_ids(ids, on.op);
  const int64_t d = g.size(-1), n = ids.numel();
  Tensor dw = like({vocab, d}, g.dtype(), g);
  floating(on.op, g.dtype(), [&](auto tag) {
    using T = decltype(tag);
    launch::embedding_backward<T>(ptr<T>(g), ids.device_data(), wide, ptr<T>(dw), n, vocab, d, padding_idx,
                                  on.stream);
  });
  on.check();
  return dw;
}

// ---- dropout, adaptive pooling ----
Tensor dropout_mask_gpu(const Tensor& x, double p, uint64_t seed) {
  On on(x, "dropout");
  Tensor m = like(x.shape(), x.dtype(), x);
  floating(on.op, x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    launch::dropout_mask<T>(ptr<T>(m), m.numel(), p, seed, on.stream);
  });
  on.check();
  return m;
}

Tensor adaptive_pool_gpu(const Tensor& x, int64_t oh, int64_t ow) {
  On on(x, "adaptive_avg_pool2d");
  Tensor y = like({x.size(0), x.size(1), oh, ow}, x.dtype(), x);
  floating(on.op, x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    launch::adaptive_avg_pool<T>(ptr<T>(x), ptr<T>(y), x.size(0) * x.size(1), x.size(2), x.size(3), oh, ow,
                                 on.stream);
  });
  on.check();
  return y;
}

Tensor adaptive_pool_backward_gpu(const Tensor& gy, const Shape& xs) {
  On on(gy, "adaptive_avg_pool2d backward");
  Tensor gx = like(xs, gy.dtype(), gy);
  floating(on.op, gy.dtype(), [&](auto tag) {
    using T = decltype(tag);
    launch::adaptive_avg_pool_backward<T>(ptr<T>(gy), ptr<T>(gx), xs[0] * xs[1], xs[2], xs[3], gy.size(2),
                                          gy.size(3), on.stream);
  });
  on.check();
  return gx;
}

// ---- strided copies ----
launch::Dims dims_of(const Shape& sizes, const std::vector<int64_t>& strides, const char* op) {
  CREW_CHECK_T(DeviceError, sizes.size() <= static_cast<size_t>(launch::kMaxDims), op,
               ": gpu copies take at most ", launch::kMaxDims, " axes, got ", sizes.size());
  launch::Dims d;
  d.nd = static_cast<int>(sizes.size());
  for (size_t i = 0; i < sizes.size(); ++i) d.size[i] = sizes[i], d.stride_a[i] = strides[i];
  return d;
}
std::vector<int64_t> contiguous_strides(const Shape& s) {
  std::vector<int64_t> st(s.size());
  int64_t acc = 1;
  for (size_t i = s.size(); i-- > 0;) st[i] = acc, acc *= s[i];
  return st;
}

// dst (contiguous over `sizes`) from src at base + coords . strides.
Tensor gather(const Tensor& src, const Shape& sizes, const std::vector<int64_t>& strides, int64_t base,
              const char* op) {
  On on(src, op);
  Tensor dst = like(sizes, src.dtype(), src);
  if (dst.numel() == 0) return dst;
  launch::gather_strided(src.device_data(), dst.device_data(), dst.numel(), base, dims_of(sizes, strides, op),
                         static_cast<int>(dtype_size(src.dtype())), on.stream);
  on.check();
  return dst;
}
// src (contiguous) into dst at base + coords . strides over src's shape.
void scatter(const Tensor& src, const Tensor& dst, const std::vector<int64_t>& strides, int64_t base,
             const char* op) {
  On on(dst, op);
  if (src.numel() == 0) return;
  launch::scatter_strided(src.device_data(), dst.device_data(), src.numel(), base,
                          dims_of(src.shape(), strides, op), static_cast<int>(dtype_size(src.dtype())),
                          on.stream);
  on.check();
}

Tensor permute_gpu(const Tensor& x, const std::vector<int64_t>& perm) {
  const std::vector<int64_t> st = contiguous_strides(x.shape());
  Shape sizes;
  std::vector<int64_t> strides;
  for (int64_t p : perm) sizes.push_back(x.size(p)), strides.push_back(st[static_cast<size_t>(p)]);
  return gather(x, sizes, strides, 0, "permute");
}

Tensor slice_axis_gpu(const Tensor& x, int64_t axis, int64_t begin, int64_t end) {
  const std::vector<int64_t> st = contiguous_strides(x.shape());
  Shape sizes = x.shape();
  sizes[static_cast<size_t>(axis)] = end - begin;
  return gather(x, sizes, st, begin * st[static_cast<size_t>(axis)], "slice");
}

Tensor slice_scatter_gpu(const Tensor& g, const Shape& shape, int64_t axis, int64_t begin) {
  Tensor out = Tensor::zeros(shape, g.dtype(), g.place());
  const std::vector<int64_t> st = contiguous_strides(shape);
  scatter(g, out, st, begin * st[static_cast<size_t>(axis)], "slice backward");
  return out;
}

Tensor concat_gpu(const std::vector<Tensor>& xs, int64_t axis, const Shape& out_shape) {
  Tensor out = like(out_shape, xs.front().dtype(), xs.front());
  const std::vector<int64_t> st = contiguous_strides(out_shape);
  int64_t at = 0;
  for (const Tensor& x : xs) {
    scatter(x, out, st, at * st[static_cast<size_t>(axis)], "concat");
    at += x.size(axis);
  }
  return out;
}

void register_copy_kernels() {
  constexpr DeviceType G = DeviceType::GPU;
  kernels::permute_kernel.set(G, &permute_gpu);
  kernels::slice_axis_kernel.set(G, &slice_axis_gpu);
  kernels::slice_scatter_kernel.set(G, &slice_scatter_gpu);
  kernels::concat_kernel.set(G, &concat_gpu);
}

// ---- attention: [B, H, T, D] copies of the heads, cuBLASLt products, the mask + softmax ----
struct Heads {
  int64_t b, t, h, d, row, base;  // row: elements between consecutive t; base: offset of the part
};
Heads heads_of(const Tensor& q, int64_t packed_heads, int part) {
  if (packed_heads > 0) {
    const int64_t c = q.size(2) / 3;
    return {q.size(0), q.size(1), packed_heads, c / packed_heads, 3 * c, part * c};
  }
  return {q.size(0), q.size(1), q.size(2), q.size(3), q.size(2) * q.size(3), 0};
}
std::vector<int64_t> heads_strides(const Heads& h) { return {h.t * h.row, h.d, h.row, 1}; }
Tensor to_bhtd(const Tensor& src, const Heads& h) {
  return gather(src, {h.b, h.h, h.t, h.d}, heads_strides(h), h.base, "attention");
}

void mask_softmax_gpu(const Tensor& s, bool causal) {
  On on(s, "attention softmax");
  floating(on.op, s.dtype(), [&](auto tag) {
    using T = decltype(tag);
    launch::mask_softmax<T>(ptr<T>(s), s.size(0) * s.size(1), s.size(2), s.size(3), causal, on.stream);
  });
  on.check();
}

std::pair<Tensor, Tensor> attention_forward_gpu(const Tensor& q, const Tensor& k, const Tensor& v,
                                                int64_t packed_heads, double scale, bool causal) {
  const bool packed = packed_heads > 0;
  const Heads hq = heads_of(q, packed_heads, 0);
  const Tensor qh = to_bhtd(q, hq), kh = to_bhtd(packed ? q : k, heads_of(packed ? q : k, packed_heads, 1));
  const Tensor vh = to_bhtd(packed ? q : v, heads_of(packed ? q : v, packed_heads, 2));
  Tensor p = kernels::affine(kernels::matmul(qh, kh, false, true), scale, 0);
  mask_softmax_gpu(p, causal);
  const Tensor oh = kernels::matmul(p, vh, false, false);
  Tensor y = like(packed ? Shape{q.size(0), q.size(1), q.size(2) / 3} : q.shape(), q.dtype(), q);
  Heads hy = hq;
  hy.row = hq.h * hq.d, hy.base = 0;
  scatter(oh, y, heads_strides(hy), 0, "attention");
  return {y, p};
}

std::vector<Tensor> attention_backward_gpu(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& p,
                                           const Tensor& grad_y, int64_t packed_heads, double scale,
                                           bool causal, const std::vector<bool>& needs) {
  const bool packed = packed_heads > 0;
  const Tensor* src[3] = {&q, packed ? &q : &k, packed ? &q : &v};
  Heads hs[3];
  for (int i = 0; i < 3; ++i) hs[i] = heads_of(*src[i], packed_heads, i);
  Heads hg = hs[0];
  hg.row = hg.h * hg.d, hg.base = 0;
  const Tensor gh = to_bhtd(grad_y, hg);
  const Tensor qh = to_bhtd(*src[0], hs[0]), kh = to_bhtd(*src[1], hs[1]), vh = to_bhtd(*src[2], hs[2]);
  // dS = scale * softmax_backward(dP = dO V^T, P)
  const Tensor ds =
      kernels::affine(kernels::softmax_backward(kernels::matmul(gh, vh, false, true), p, 3, false), scale, 0);
  const Tensor d[3] = {kernels::matmul(ds, kh, false, false), kernels::matmul(ds, qh, true, false),
                       kernels::matmul(p, gh, true, false)};
  std::vector<Tensor> grads(3);
  if (packed) {
    Tensor dqkv = like(q.shape(), q.dtype(), q);
    for (int i = 0; i < 3; ++i) scatter(d[i], dqkv, heads_strides(hs[i]), hs[i].base, "attention backward");
    return {dqkv};
  }
  for (int i = 0; i < 3; ++i) {
    if (i < static_cast<int>(needs.size()) && !needs[i]) continue;
    grads[i] = like(src[i]->shape(), q.dtype(), q);
    scatter(d[i], grads[i], heads_strides(hs[i]), 0, "attention backward");
  }
  return grads;
}

}  // namespace

void register_nn_extra_kernels() {
  constexpr DeviceType G = DeviceType::GPU;
  kernels::batch_norm_channel_sums_kernel.set(G, &channel_sums_gpu);
  kernels::batch_norm_channel_sq_dev_kernel.set(G, &channel_sq_dev_gpu);
  kernels::batch_norm_normalize_kernel.set(G, &normalize_gpu);
  kernels::batch_norm_grad_sums_kernel.set(G, &grad_sums_gpu);
  kernels::batch_norm_input_grad_kernel.set(G, &input_grad_gpu);
  kernels::batch_norm_update_running_kernel.set(G, &update_running_gpu);
  kernels::batch_norm_forward_kernel.set(G, &bn_forward_gpu);
  kernels::batch_norm_backward_kernel.set(G, &bn_backward_gpu);
  kernels::layer_norm_forward_kernel.set(G, &ln_forward_gpu);
  kernels::layer_norm_backward_kernel.set(G, &ln_backward_gpu);
  kernels::embedding_forward_kernel.set(G, &embedding_forward_gpu);
  kernels::embedding_backward_kernel.set(G, &embedding_backward_gpu);
  kernels::dropout_mask_kernel.set(G, &dropout_mask_gpu);
  kernels::adaptive_avg_pool2d_forward_kernel.set(G, &adaptive_pool_gpu);
  kernels::adaptive_avg_pool2d_backward_kernel.set(G, &adaptive_pool_backward_gpu);
  kernels::attention_forward_kernel.set(G, &attention_forward_gpu);
  kernels::attention_backward_kernel.set(G, &attention_backward_gpu);
  kernels::attention_mask_softmax_kernel.set(G, &mask_softmax_gpu);
  register_copy_kernels();
}

}  // namespace crew::cuda
