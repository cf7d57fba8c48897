// scaled_dot_product_attention: one autograd node; products on kernels::matmul (oneDNN),
// the row softmax on oneDNN's softmax primitives.
#include <cmath>
#include <limits>

#include "crew/autograd/autograd.h"
#include "crew/autograd/function.h"
#include "crew/autograd/ops.h"
#include "crew/nn/functional.h"
#include "crew/tensor/kernels/broadcast.h"
#include "crew/tensor/kernels/gemm.h"
#include "crew/tensor/kernels/softmax_rows.h"
#include "crew/tensor/kernels/threading.h"

namespace crew::nn::functional {
namespace {

void check_attention(const Tensor& q, const Tensor& k, const Tensor& v) {
  kernels::check_floating(q, "scaled_dot_product_attention");
  CREW_CHECK(q.dim() == 4 && k.dim() == 4 && v.dim() == 4,
             "scaled_dot_product_attention: q, k, v must be [B, T, H, D], got ", shape_str(q.shape()), ", ",
             shape_str(k.shape()), ", ", shape_str(v.shape()));
  CREW_CHECK(
      k.shape() == v.shape() && q.size(0) == k.size(0) && q.size(2) == k.size(2) && q.size(3) == k.size(3),
      "scaled_dot_product_attention: shapes of q ", shape_str(q.shape()), ", k ", shape_str(k.shape()),
      " and v ", shape_str(v.shape()), " differ (expected k = v = [B, T_k, H, D] for q [B, T, H, D])");
  CREW_CHECK(q.dtype() == k.dtype() && q.dtype() == v.dtype(),
             "scaled_dot_product_attention: dtypes differ (", dtype_name(q.dtype()), ", ",
             dtype_name(k.dtype()), ", ", dtype_name(v.dtype()), ")");
}

// [B, T, H, D] <-> [B, H, T, D] (the swap is its own inverse), contiguous, times alpha.
Tensor swap_time_heads(const Tensor& x, double alpha = 1.0) {
  NoGradGuard no_grad;
  Tensor y = permute(x.detach(), {0, 2, 1, 3});
  return alpha == 1.0 ? y : kernels::affine(y, alpha, 0.0);
}

// s [B, H, T_q, T_k]: entries of keys after their query (j > i) become -inf.
template <typename T>
void mask_future(T* s, int64_t matrices, int64_t tq, int64_t tk) {
  detail::parallel_for(matrices * tq, 64, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t i = r % tq;
      std::fill(s + r * tk + std::min(i + 1, tk), s + (r + 1) * tk, -std::numeric_limits<T>::infinity());
    }
  });
}

// Saved for the backward: Q, K, V as given ([B, T, H, D]), the probabilities P and the scale.
struct AttentionSaved {
  Tensor q, k, v, p;
  double scale;
};

// float32: every product is one oneDNN matmul over strided views, [B, T, H, D] data read and
// written as [B, H, T, D] (or transposed) without a copy, the scale an output scale.
kernels::MatrixView heads(const Tensor& t) {  // [B, T, H, D] as [B, H, T, D]
  const int64_t b = t.size(0), n = t.size(1), h = t.size(2), d = t.size(3);
  return {t.data<float>(), {b, h, n, d}, {n * h * d, d, h * d, 1}};
}
kernels::MatrixView heads_t(const Tensor& t) {  // [B, T, H, D] as [B, H, D, T]
  const int64_t b = t.size(0), n = t.size(1), h = t.size(2), d = t.size(3);
  return {t.data<float>(), {b, h, d, n}, {n * h * d, d, 1, h * d}};
}
kernels::MatrixView scores(const Tensor& p) {  // [B, H, T_q, T_k] as it is
  const int64_t b = p.size(0), h = p.size(1), tq = p.size(2), tk = p.size(3);
  return {p.data<float>(), {b, h, tq, tk}, {h * tq * tk, tq * tk, tk, 1}};
}
kernels::MatrixView scores_t(const Tensor& p) {  // [B, H, T_q, T_k] as [B, H, T_k, T_q]
  const int64_t b = p.size(0), h = p.size(1), tq = p.size(2), tk = p.size(3);
  return {p.data<float>(), {b, h, tk, tq}, {h * tq * tk, tq * tk, 1, tk}};
}

std::vector<Tensor> backward_f32(const AttentionSaved& s, const Tensor& g, const std::vector<bool>& needs) {
  const float scale = static_cast<float>(s.scale);
  std::vector<Tensor> grads(3);
  if (needs[2]) {
    grads[2] = Tensor::uninitialized(s.v.shape());
    kernels::matmul_views(scores_t(s.p), heads(g), heads(grads[2]));  // dV = P^T dO
  }
  if (!needs[0] && !needs[1]) return grads;
  Tensor dp = Tensor::uninitialized(s.p.shape());
  kernels::matmul_views(heads(g), heads_t(s.v), scores(dp));  // dP = dO V^T
  const Tensor ds = kernels::softmax_rows_backward(s.p, dp);  // dS = P * (dP - rowsum(dP * P))
  if (needs[0]) {
    grads[0] = Tensor::uninitialized(s.q.shape());
    kernels::matmul_views(scores(ds), heads(s.k), heads(grads[0]), scale);  // dQ = scale dS K
  }
  if (needs[1]) {
    grads[1] = Tensor::uninitialized(s.k.shape());
    kernels::matmul_views(scores_t(ds), heads(s.q), heads(grads[1]), scale);  // dK = scale dS^T Q
  }
  return grads;
}

// float64 (gradient checks): the same products on transposed copies.
std::vector<Tensor> backward_f64(const AttentionSaved& s, const Tensor& g, const std::vector<bool>& needs) {
  const Tensor gh = swap_time_heads(g), qs = swap_time_heads(s.q, s.scale);
  const Tensor kh = swap_time_heads(s.k), vh = swap_time_heads(s.v);
  std::vector<Tensor> grads(3);
  if (needs[2]) grads[2] = swap_time_heads(kernels::matmul(s.p, gh, true, false));  // dV = P^T dO
  if (!needs[0] && !needs[1]) return grads;
  const Tensor dp = kernels::matmul(gh, vh, false, true);     // dP = dO V^T
  const Tensor ds = kernels::softmax_rows_backward(s.p, dp);  // dS = P * (dP - rowsum(dP * P))
  if (needs[0]) grads[0] = swap_time_heads(kernels::matmul(ds, kh, false, false), s.scale);  // scale dS K
  if (needs[1]) grads[1] = swap_time_heads(kernels::matmul(ds, qs, true, false));            // dS^T (scale Q)
  return grads;
}

// S = scale Q K^T into s.p ([B, H, T_q, T_k]); returns O = P V as [B, T_q, H, D] after the
// caller's mask and softmax (done by `finish`).
template <typename Finish>
Tensor forward_products(AttentionSaved& s, const Finish& finish) {
  const int64_t b = s.q.size(0), tq = s.q.size(1), h = s.q.size(2), d = s.q.size(3), tk = s.k.size(1);
  if (s.q.dtype() == DType::FLOAT32) {
    s.p = Tensor::uninitialized({b, h, tq, tk});
    kernels::matmul_views(heads(s.q), heads_t(s.k), scores(s.p), static_cast<float>(s.scale));
    finish();
    Tensor y = Tensor::uninitialized({b, tq, h, d});
    kernels::matmul_views(scores(s.p), heads(s.v), heads(y));
    return y;
  }
  s.p = kernels::matmul(swap_time_heads(s.q, s.scale), swap_time_heads(s.k), false, true);
  finish();
  return swap_time_heads(kernels::matmul(s.p, swap_time_heads(s.v), false, false));
}

}  // namespace

Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v, bool is_causal,
                                    double scale) {
  check_attention(q, k, v);
  const int64_t b = q.size(0), tq = q.size(1), h = q.size(2), d = q.size(3), tk = k.size(1);
  AttentionSaved s{q.detach(), k.detach(), v.detach(), Tensor(), 0.0};
  s.scale = scale == 0 ? 1.0 / std::sqrt(static_cast<double>(d)) : scale;
  Tensor y = forward_products(s, [&] {
    if (is_causal && tk > 0) {
      dispatch_dtype(q.dtype(), [&](auto tag) {
        using T = decltype(tag);
        if constexpr (std::is_floating_point_v<T>) mask_future(s.p.data<T>(), b * h, tq, tk);
      });
    }
    kernels::softmax_rows_(s.p);
  });
  if (autograd::should_record({&q, &k, &v})) {
    autograd::record(
        y, "scaled_dot_product_attention", {q, k, v}, [s](const Tensor& g, const std::vector<bool>& needs) {
          return g.dtype() == DType::FLOAT32 ? backward_f32(s, g, needs) : backward_f64(s, g, needs);
        });
  }
  return y;
}

}  // namespace crew::nn::functional
