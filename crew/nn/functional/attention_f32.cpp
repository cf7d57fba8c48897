#include "crew/nn/functional/attention_f32.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "crew/tensor/kernels/gemm.h"
#include "crew/tensor/kernels/softmax_rows.h"
#include "crew/tensor/kernels/threading.h"

namespace crew::nn::functional::attention_detail {
namespace {

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
kernels::MatrixView heads(const HeadsLayout& l) {  // [B, T, H, D] as [B, H, T, D]
  return {l.data, {l.b, l.h, l.t, l.d}, {l.batch, l.d, l.row, 1}};
}
kernels::MatrixView heads_t(const HeadsLayout& l) {  // [B, T, H, D] as [B, H, D, T]
  return {l.data, {l.b, l.h, l.d, l.t}, {l.batch, l.d, 1, l.row}};
}
// Rows [r0, r1) and columns [c0, c1) of p [B, H, T_q, T_k], as they are or transposed.
kernels::MatrixView scores(const Tensor& p, int64_t r0, int64_t r1, int64_t c0, int64_t c1,
                           bool transposed = false) {
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

}  // namespace

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

void mask_and_softmax(Tensor& p, bool causal) {
  const int64_t b = p.size(0), h = p.size(1), tq = p.size(2), tk = p.size(3);
  if (causal && tk > 0) {
    dispatch_dtype(p.dtype(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_floating_point_v<T>) mask_future(p.data<T>(), b * h, tq, tk);
    });
  }
  kernels::softmax_rows_(p);
}

Tensor attention_forward_f32(const AttentionInputs& in, const HeadsLayout& y) {
  const int64_t tq = in.q.t, tk = in.k.t;
  Tensor p = Tensor::uninitialized({in.q.b, in.q.h, tq, tk});
  const std::vector<Block> bs = blocks(tq, tk, in.causal);
  // S = scale Q K^T; in a causal block the keys after the block's last query stay unwritten:
  // the mask sets them to -inf.
  for (const Block& b : bs) {
    kernels::matmul_views(heads(rows(in.q, b.r0, b.r1)), heads_t(rows(in.k, 0, b.keys)),
                          scores(p, b.r0, b.r1, 0, b.keys), in.scale);
  }
  mask_and_softmax(p, in.causal);
  for (const Block& b : bs) {  // O = P V
    kernels::matmul_views(scores(p, b.r0, b.r1, 0, b.keys), heads(rows(in.v, 0, b.keys)),
                          heads(rows(y, b.r0, b.r1)));
  }
  return p;
}

void attention_backward_f32(const AttentionInputs& in, const Tensor& p, const HeadsLayout& g,
                            const AttentionGrads& out) {
  const int64_t tq = in.q.t, tk = in.k.t;
  const std::vector<Block> bs = blocks(tq, tk, in.causal);
  if (out.dv.data) {  // dV = P^T dO, per key block from the queries that see it
    for (const Block& b : bs) {
      kernels::matmul_views(scores(p, b.q0, tq, b.c0, b.c1, /*transposed=*/true), heads(rows(g, b.q0, tq)),
                            heads(rows(out.dv, b.c0, b.c1)));
    }
  }
  if (!out.dq.data && !out.dk.data) return;
  Tensor dp = Tensor::uninitialized(p.shape());
  for (const Block& b : bs) {  // dP = dO V^T
    kernels::matmul_views(heads(rows(g, b.r0, b.r1)), heads_t(rows(in.v, 0, b.keys)),
                          scores(dp, b.r0, b.r1, 0, b.keys));
    zero_skipped(dp, b);
  }
  const Tensor ds = kernels::softmax_rows_backward(p, dp);  // dS = P * (dP - rowsum(dP * P))
  if (out.dq.data) {                                        // dQ = scale dS K
    for (const Block& b : bs) {
      kernels::matmul_views(scores(ds, b.r0, b.r1, 0, b.keys), heads(rows(in.k, 0, b.keys)),
                            heads(rows(out.dq, b.r0, b.r1)), in.scale);
    }
  }
  if (out.dk.data) {  // dK = scale dS^T Q
    for (const Block& b : bs) {
      kernels::matmul_views(scores(ds, b.q0, tq, b.c0, b.c1, /*transposed=*/true),
                            heads(rows(in.q, b.q0, tq)), heads(rows(out.dk, b.c0, b.c1)), in.scale);
    }
  }
}

}  // namespace crew::nn::functional::attention_detail
