#include "crew/tensor/kernels/attention.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "crew/tensor/kernels/gemm.h"
#include "crew/tensor/kernels/softmax_rows.h"
#include "crew/tensor/kernels/threading.h"

namespace crew::kernels {
namespace {

// One of Q, K, V, O or their gradients as [B, T, H, D]: rows (time steps) `row` floats
// apart, batches `batch` floats apart, the heads' D values side by side.
struct HeadsLayout {
  float* data = nullptr;
  int64_t b = 0, t = 0, h = 0, d = 0, row = 0, batch = 0;
};

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
  out.data = l.data + r0 * l.row;
  out.t = r1 - r0;
  return out;
}
MatrixView heads(const HeadsLayout& l) {  // [B, T, H, D] as [B, H, T, D]
  return {l.data, {l.b, l.h, l.t, l.d}, {l.batch, l.d, l.row, 1}};
}
MatrixView heads_t(const HeadsLayout& l) {  // [B, T, H, D] as [B, H, D, T]
  return {l.data, {l.b, l.h, l.d, l.t}, {l.batch, l.d, 1, l.row}};
}
// Rows [r0, r1) and columns [c0, c1) of p [B, H, T_q, T_k], as they are or transposed.
MatrixView scores(const Tensor& p, int64_t r0, int64_t r1, int64_t c0, int64_t c1, bool transposed = false) {
  const int64_t b = p.size(0), h = p.size(1), tq = p.size(2), tk = p.size(3);
  float* data = p.data<float>() + r0 * tk + c0;
  if (transposed) return {data, {b, h, c1 - c0, r1 - r0}, {h * tq * tk, tq * tk, 1, tk}};
  return {data, {b, h, r1 - r0, c1 - c0}, {h * tq * tk, tq * tk, tk, 1}};
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
  return {t.data<float>(), t.size(0), t.size(1), t.size(2), t.size(3), row, t.size(1) * row};
}

HeadsLayout heads_layout(const Tensor& t, int64_t heads) {
  const int64_t c = t.size(2);
  return {t.data<float>(), t.size(0), t.size(1), heads, c / heads, c, t.size(1) * c};
}

HeadsLayout packed_part(const Tensor& qkv, int64_t part, int64_t heads) {
  const int64_t c = qkv.size(2) / 3;
  return {qkv.data<float>() + part * c, qkv.size(0), qkv.size(1), heads, c / heads, 3 * c,
          qkv.size(1) * 3 * c};
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

Tensor forward_views(const AttentionInputs& in, const HeadsLayout& y) {
  const int64_t tq = in.q.t, tk = in.k.t;
  Tensor p = Tensor::uninitialized({in.q.b, in.q.h, tq, tk});
  const std::vector<Block> bs = blocks(tq, tk, in.causal);
  // S = scale Q K^T; in a causal block the keys after the block's last query stay unwritten:
  // the mask sets them to -inf.
  for (const Block& b : bs) {
    matmul_views(heads(rows(in.q, b.r0, b.r1)), heads_t(rows(in.k, 0, b.keys)),
                 scores(p, b.r0, b.r1, 0, b.keys), in.scale);
  }
  mask_and_softmax_cpu(p, in.causal);
  for (const Block& b : bs) {  // O = P V
    matmul_views(scores(p, b.r0, b.r1, 0, b.keys), heads(rows(in.v, 0, b.keys)), heads(rows(y, b.r0, b.r1)));
  }
  return p;
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
  Tensor dp = Tensor::uninitialized(p.shape());
  for (const Block& b : bs) {  // dP = dO V^T
    matmul_views(heads(rows(g, b.r0, b.r1)), heads_t(rows(in.v, 0, b.keys)),
                 scores(dp, b.r0, b.r1, 0, b.keys));
    zero_skipped(dp, b);
  }
  const Tensor ds = softmax_rows_backward(p, dp);  // dS = P * (dP - rowsum(dP * P))
  if (out.dq.data) {                               // dQ = scale dS K
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

std::pair<Tensor, Tensor> attention_forward_cpu(const Tensor& q, const Tensor& k, const Tensor& v,
                                                int64_t packed_heads, double scale, bool causal) {
  const AttentionInputs in = inputs_of(q, k, v, packed_heads, scale, causal);
  if (packed_heads > 0) {
    Tensor y = Tensor::uninitialized({q.size(0), q.size(1), q.size(2) / 3});
    Tensor p = forward_views(in, heads_layout(y, packed_heads));
    return {y, p};
  }
  Tensor y = Tensor::uninitialized(q.shape());
  Tensor p = forward_views(in, heads_layout(y));
  return {y, p};
}

std::vector<Tensor> attention_backward_cpu(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& p,
                                           const Tensor& grad_y, int64_t packed_heads, double scale,
                                           bool causal, const std::vector<bool>& needs) {
  const AttentionInputs in = inputs_of(q, k, v, packed_heads, scale, causal);
  if (packed_heads > 0) {
    Tensor dqkv = Tensor::uninitialized(q.shape());
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
    grads[i] = Tensor::uninitialized(src[i]->shape());
    *dst[i] = heads_layout(grads[i]);
  }
  backward_views(in, p, heads_layout(grad_y), out);
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
