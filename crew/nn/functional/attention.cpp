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

// Saved for the backward: scale * Q, K, V as [B, H, T, D] and the probabilities P.
struct AttentionSaved {
  Tensor qs, kh, vh, p;
  double scale;
};

std::vector<Tensor> attention_backward(const AttentionSaved& s, const Tensor& g,
                                       const std::vector<bool>& needs) {
  const Tensor gh = swap_time_heads(g);
  std::vector<Tensor> grads(3);
  if (needs[2]) grads[2] = swap_time_heads(kernels::matmul(s.p, gh, true, false));  // dV = P^T dO
  if (!needs[0] && !needs[1]) return grads;
  const Tensor dp = kernels::matmul(gh, s.vh, false, true);   // dP = dO V^T
  const Tensor ds = kernels::softmax_rows_backward(s.p, dp);  // dS = P * (dP - rowsum(dP * P))
  if (needs[0]) grads[0] = swap_time_heads(kernels::matmul(ds, s.kh, false, false), s.scale);  // scale dS K
  if (needs[1]) grads[1] = swap_time_heads(kernels::matmul(ds, s.qs, true, false));  // dS^T (scale Q)
  return grads;
}

}  // namespace

Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v, bool is_causal,
                                    double scale) {
  check_attention(q, k, v);
  const int64_t b = q.size(0), tq = q.size(1), h = q.size(2), d = q.size(3), tk = k.size(1);
  AttentionSaved s;
  s.scale = scale == 0 ? 1.0 / std::sqrt(static_cast<double>(d)) : scale;
  s.qs = swap_time_heads(q, s.scale);
  s.kh = swap_time_heads(k);
  s.vh = swap_time_heads(v);
  s.p = kernels::matmul(s.qs, s.kh, false, true);  // S = scale Q K^T, [B, H, T_q, T_k]
  if (is_causal && tk > 0) {
    dispatch_dtype(q.dtype(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_floating_point_v<T>) mask_future(s.p.data<T>(), b * h, tq, tk);
    });
  }
  kernels::softmax_rows_(s.p);
  Tensor y = swap_time_heads(kernels::matmul(s.p, s.vh, false, false));  // O = P V
  if (autograd::should_record({&q, &k, &v})) {
    autograd::record(
        y, "scaled_dot_product_attention", {q, k, v},
        [s](const Tensor& g, const std::vector<bool>& needs) { return attention_backward(s, g, needs); });
  }
  return y;
}

}  // namespace crew::nn::functional
