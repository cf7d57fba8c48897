#include "crew/tensor/kernels/attention.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "crew/core/check.h"
#include "crew/tensor/kernels/gemm.h"
#include "crew/tensor/kernels/low_precision.h"
#include "crew/tensor/kernels/softmax_rows.h"
#include "crew/tensor/kernels/threading.h"

namespace crew::kernels {
namespace {

// One of Q, K, V, O or their gradients as [B, T, H, D]: rows (time steps) `row` elements
// apart, batches `batch` elements apart, the heads' D values side by side.
struct HeadsLayout {
  void* data = nullptr;
  int64_t b = 0, t = 0, h = 0, d = 0, row = 0, batch = 0;
  DType dtype = DType::FLOAT32;
};

// The element `elems` elements after `data`, for elements of `dtype`.
void* advance(void* data, DType dtype, int64_t elems) {
  return static_cast<char*>(data) + elems * static_cast<int64_t>(dtype_size(dtype));
}

struct AttentionInputs {
  HeadsLayout q, k, v;
  float scale = 1.0f;
  bool causal = false;
};

// Where the gradients go; a null data pointer means that one is not wanted.
struct AttentionGrads {
  HeadsLayout dq, dk, dv;
};

// Query rows per block of causal attention: large enough for oneDNN's matmul to stay at its
// rate, small enough to skip most of the masked products at long T.
constexpr int64_t kCausalBlock = 64;

// Queries [r0, r1) see keys [0, keys); keys [c0, c1) (as a key block) are seen by queries
// [q0, T_q). Unblocked: one block, all queries and all keys.
struct Block {
  int64_t r0, r1, keys, c0, c1, q0;
};
std::vector<Block> blocks(int64_t tq, int64_t tk, bool causal) {
  if (!causal || tq != tk || tq <= kCausalBlock) return {{0, tq, tk, 0, tk, 0}};
  std::vector<Block> out;
  for (int64_t r0 = 0; r0 < tq; r0 += kCausalBlock) {
    const int64_t r1 = std::min(tq, r0 + kCausalBlock);
    out.push_back({r0, r1, r1, r0, r1, r0});
  }
  return out;
}

HeadsLayout rows(const HeadsLayout& l, int64_t r0, int64_t r1) {
  HeadsLayout out = l;
  out.data = advance(l.data, l.dtype, r0 * l.row);
  out.t = r1 - r0;
  return out;
}
MatrixView heads(const HeadsLayout& l) {  // [B, T, H, D] as [B, H, T, D]
  return {l.data, {l.b, l.h, l.t, l.d}, {l.batch, l.d, l.row, 1}, l.dtype};
}
MatrixView heads_t(const HeadsLayout& l) {  // [B, T, H, D] as [B, H, D, T]
  return {l.data, {l.b, l.h, l.d, l.t}, {l.batch, l.d, 1, l.row}, l.dtype};
}
// Rows [r0, r1) and columns [c0, c1) of p [B, H, T_q, T_k], as they are or transposed.
MatrixView scores(const Tensor& p, int64_t r0, int64_t r1, int64_t c0, int64_t c1, bool transposed = false) {
  const int64_t b = p.size(0), h = p.size(1), tq = p.size(2), tk = p.size(3);
  void* data = advance(p.raw_data(), p.dtype(), r0 * tk + c0);
  if (transposed) return {data, {b, h, c1 - c0, r1 - r0}, {h * tq * tk, tq * tk, 1, tk}, p.dtype()};
  return {data, {b, h, r1 - r0, c1 - c0}, {h * tq * tk, tq * tk, tk, 1}, p.dtype()};
}

template <typename T>
void mask_future(T* s, int64_t matrices, int64_t tq, int64_t tk) {
  detail::parallel_for(matrices * tq, 64, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t i = r % tq;
      std::fill(s + r * tk + std::min(i + 1, tk), s + (r + 1) * tk, -std::numeric_limits<T>::infinity());
    }
  });
}

// Zeros dp's columns [keys, T_k) of rows [r0, r1): the products skipped there are not written,
// and the softmax backward multiplies them by P = 0 (garbage could be NaN).
void zero_skipped(const Tensor& dp, const Block& blk) {
  const int64_t matrices = dp.size(0) * dp.size(1), tq = dp.size(2), tk = dp.size(3);
  if (blk.keys >= tk) return;
  float* base = dp.data<float>();
  detail::parallel_for(matrices, 4, [&](int64_t begin, int64_t end) {
    for (int64_t m = begin; m < end; ++m) {
      for (int64_t r = blk.r0; r < blk.r1; ++r) {
        float* row = base + (m * tq + r) * tk;
        std::fill(row + blk.keys, row + tk, 0.0f);
      }
    }
  });
}

HeadsLayout heads_layout(const Tensor& t) {
  const int64_t row = t.size(2) * t.size(3);
  return {t.raw_data(), t.size(0), t.size(1), t.size(2), t.size(3), row, t.size(1) * row, t.dtype()};
}

HeadsLayout heads_layout(const Tensor& t, int64_t heads) {
  const int64_t c = t.size(2);
  return {t.raw_data(), t.size(0), t.size(1), heads, c / heads, c, t.size(1) * c, t.dtype()};
}

HeadsLayout packed_part(const Tensor& qkv, int64_t part, int64_t heads) {
  const int64_t c = qkv.size(2) / 3;
  return {advance(qkv.raw_data(), qkv.dtype(), part * c),
          qkv.size(0),
          qkv.size(1),
          heads,
          c / heads,
          3 * c,
          qkv.size(1) * 3 * c,
          qkv.dtype()};
}

void mask_and_softmax_cpu(const Tensor& p, bool causal) {
  const int64_t b = p.size(0), h = p.size(1), tq = p.size(2), tk = p.size(3);
  if (causal && tk > 0) {
    dispatch_dtype(p.dtype(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_floating_point_v<T>) mask_future(p.data<T>(), b * h, tq, tk);
    });
  }
  softmax_rows_(p);
}

// The float32 scores or probabilities s in the operands' dtype (s itself for float32).
Tensor in_dtype(const Tensor& s, DType dtype) { return dtype == DType::FLOAT32 ? s : s.to(dtype); }

// Returns P, in the operands' dtype. For 16-bit operands the scores, the mask and the softmax
// are float32 (as under PyTorch's autocast) and P is then rounded once to 16 bits: the P V
// product reads it in that dtype anyway, it halves the [B, H, T_q, T_k] kept for the
// backward, and the softmax backward's error from it (2^-8 relative per element for
// bfloat16) is no larger than that of rounding dS to 16 bits for the dQ and dK products.
Tensor forward_views(const AttentionInputs& in, const HeadsLayout& y) {
  const int64_t tq = in.q.t, tk = in.k.t;
  Tensor s = Tensor::uninitialized({in.q.b, in.q.h, tq, tk});
  const std::vector<Block> bs = blocks(tq, tk, in.causal);
  // S = scale Q K^T; in a causal block the keys after the block's last query stay unwritten:
  // the mask sets them to -inf.
  for (const Block& b : bs) {
    matmul_views(heads(rows(in.q, b.r0, b.r1)), heads_t(rows(in.k, 0, b.keys)),
                 scores(s, b.r0, b.r1, 0, b.keys), in.scale);
  }
  mask_and_softmax_cpu(s, in.causal);
  const Tensor p = in_dtype(s, in.q.dtype);
  for (const Block& b : bs) {  // O = P V
    matmul_views(scores(p, b.r0, b.r1, 0, b.keys), heads(rows(in.v, 0, b.keys)), heads(rows(y, b.r0, b.r1)));
  }
  return p;
}

// dS = P * (dP - rowsum(dP * P)) with dP = dO V^T, in the operands' dtype: dP and the
// softmax backward are float32 (dS is rounded once, for the dQ and dK products).
Tensor scores_grad(const AttentionInputs& in, const Tensor& p, const HeadsLayout& g,
                   const std::vector<Block>& bs) {
  Tensor dp = Tensor::uninitialized(p.shape());
  for (const Block& b : bs) {
    matmul_views(heads(rows(g, b.r0, b.r1)), heads_t(rows(in.v, 0, b.keys)),
                 scores(dp, b.r0, b.r1, 0, b.keys));
    zero_skipped(dp, b);
  }
  return in_dtype(softmax_rows_backward(to_float32(p), dp), in.q.dtype);
}

void backward_views(const AttentionInputs& in, const Tensor& p, const HeadsLayout& g,
                    const AttentionGrads& out) {
  const int64_t tq = in.q.t, tk = in.k.t;
  const std::vector<Block> bs = blocks(tq, tk, in.causal);
  if (out.dv.data) {  // dV = P^T dO, per key block from the queries that see it
    for (const Block& b : bs) {
      matmul_views(scores(p, b.q0, tq, b.c0, b.c1, /*transposed=*/true), heads(rows(g, b.q0, tq)),
                   heads(rows(out.dv, b.c0, b.c1)));
    }
  }
  if (!out.dq.data && !out.dk.data) return;
  const Tensor ds = scores_grad(in, p, g, bs);
  if (out.dq.data) {  // dQ = scale dS K
    for (const Block& b : bs) {
      matmul_views(scores(ds, b.r0, b.r1, 0, b.keys), heads(rows(in.k, 0, b.keys)),
                   heads(rows(out.dq, b.r0, b.r1)), in.scale);
    }
  }
  if (out.dk.data) {  // dK = scale dS^T Q
    for (const Block& b : bs) {
      matmul_views(scores(ds, b.q0, tq, b.c0, b.c1, /*transposed=*/true), heads(rows(in.q, b.q0, tq)),
                   heads(rows(out.dk, b.c0, b.c1)), in.scale);
    }
  }
}

// Q, K, V of the operands: three [B, T, H, D] tensors, or parts of one packed qkv.
AttentionInputs inputs_of(const Tensor& q, const Tensor& k, const Tensor& v, int64_t packed_heads,
                          double scale, bool causal) {
  if (packed_heads > 0) {
    return {packed_part(q, 0, packed_heads), packed_part(q, 1, packed_heads), packed_part(q, 2, packed_heads),
            static_cast<float>(scale), causal};
  }
  return {heads_layout(q), heads_layout(k), heads_layout(v), static_cast<float>(scale), causal};
}

std::pair<Tensor, Tensor> forward_native(const Tensor& q, const Tensor& k, const Tensor& v,
                                         int64_t packed_heads, double scale, bool causal) {
  const AttentionInputs in = inputs_of(q, k, v, packed_heads, scale, causal);
  if (packed_heads > 0) {
    Tensor y = Tensor::uninitialized({q.size(0), q.size(1), q.size(2) / 3}, q.dtype());
    Tensor p = forward_views(in, heads_layout(y, packed_heads));
    return {y, p};
  }
  Tensor y = Tensor::uninitialized(q.shape(), q.dtype());
  Tensor p = forward_views(in, heads_layout(y));
  return {y, p};
}

std::vector<Tensor> backward_native(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& p,
                                    const Tensor& grad_y, int64_t packed_heads, double scale, bool causal,
                                    const std::vector<bool>& needs) {
  const AttentionInputs in = inputs_of(q, k, v, packed_heads, scale, causal);
  if (packed_heads > 0) {
    Tensor dqkv = Tensor::uninitialized(q.shape(), q.dtype());
    backward_views(in, p, heads_layout(grad_y, packed_heads),
                   {packed_part(dqkv, 0, packed_heads), packed_part(dqkv, 1, packed_heads),
                    packed_part(dqkv, 2, packed_heads)});
    return {dqkv};
  }
  std::vector<Tensor> grads(3);
  AttentionGrads out;
  HeadsLayout* dst[3] = {&out.dq, &out.dk, &out.dv};
  const Tensor* src[3] = {&q, &k, &v};
  for (int i = 0; i < 3; ++i) {
    if (!needs[i]) continue;
    grads[i] = Tensor::uninitialized(src[i]->shape(), q.dtype());
    *dst[i] = heads_layout(grads[i]);
  }
  backward_views(in, p, heads_layout(grad_y), out);
  return grads;
}

// 16-bit operands where oneDNN has no kernel for their dtype (float16; bfloat16 below
// AVX-512): the float32 kernel on converted operands (a packed qkv converted once), results
// rounded to the operands' dtype, P included, so that both paths keep the same P.
bool via_float32(DType dtype) {
  return is_low_precision(dtype) && !dnnl_supports(dtype, "scaled_dot_product_attention");
}
std::vector<Tensor> operands_f32(const Tensor& q, const Tensor& k, const Tensor& v, int64_t packed_heads) {
  const Tensor q32 = to_float32(q);
  if (packed_heads > 0) return {q32, q32, q32};
  return {q32, to_float32(k), to_float32(v)};
}

std::pair<Tensor, Tensor> attention_forward_cpu(const Tensor& q, const Tensor& k, const Tensor& v,
                                                int64_t packed_heads, double scale, bool causal) {
  if (!via_float32(q.dtype())) return forward_native(q, k, v, packed_heads, scale, causal);
  const std::vector<Tensor> f32 = operands_f32(q, k, v, packed_heads);
  auto [y, p] = forward_native(f32[0], f32[1], f32[2], packed_heads, scale, causal);
  return {y.to(q.dtype()), p.to(q.dtype())};
}

std::vector<Tensor> attention_backward_cpu(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& p,
                                           const Tensor& grad_y, int64_t packed_heads, double scale,
                                           bool causal, const std::vector<bool>& needs) {
  CREW_CHECK(p.dtype() == q.dtype(), "scaled_dot_product_attention backward: P is ", dtype_name(p.dtype()),
             ", the operands ", dtype_name(q.dtype()));
  const Tensor g = grad_y.dtype() == q.dtype() ? grad_y : grad_y.to(q.dtype());
  if (!via_float32(q.dtype())) return backward_native(q, k, v, p, g, packed_heads, scale, causal, needs);
  const std::vector<Tensor> f32 = operands_f32(q, k, v, packed_heads);
  std::vector<Tensor> grads = backward_native(f32[0], f32[1], f32[2], to_float32(p), to_float32(g),
                                              packed_heads, scale, causal, needs);
  for (Tensor& t : grads) {
    if (t.defined()) t = t.to(q.dtype());
  }
  return grads;
}

}  // namespace

constinit KernelSlot<AttentionForwardFn> attention_forward_kernel("attention_forward",
                                                                  &attention_forward_cpu);
constinit KernelSlot<AttentionBackwardFn> attention_backward_kernel("attention_backward",
                                                                    &attention_backward_cpu);
constinit KernelSlot<AttentionMaskSoftmaxFn> attention_mask_softmax_kernel("attention_mask_softmax",
                                                                           &mask_and_softmax_cpu);

std::pair<Tensor, Tensor> attention_forward(const Tensor& q, const Tensor& k, const Tensor& v,
                                            int64_t packed_heads, double scale, bool causal) {
  check_same_place("scaled_dot_product_attention", {{"q", &q}, {"k", &k}, {"v", &v}});
  return attention_forward_kernel.get(q.place().type)(q, k, v, packed_heads, scale, causal);
}

std::vector<Tensor> attention_backward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& p,
                                       const Tensor& grad_y, int64_t packed_heads, double scale, bool causal,
                                       const std::vector<bool>& needs) {
  check_same_place("scaled_dot_product_attention backward",
                   {{"q", &q}, {"k", &k}, {"v", &v}, {"p", &p}, {"grad_y", &grad_y}});
  return attention_backward_kernel.get(q.place().type)(q, k, v, p, grad_y, packed_heads, scale, causal,
                                                       needs);
}

void attention_mask_softmax_(const Tensor& scores, bool causal) {
  attention_mask_softmax_kernel.get(scores.place().type)(scores, causal);
}

}  // namespace crew::kernels
