// scaled_dot_product_attention and packed_qkv_attention: one autograd node each; float32,
// bfloat16 and float16 on crew/tensor/kernels/attention (oneDNN matmuls over strided views),
// float64 composed of matmuls on transposed copies.
#include "crew/tensor/kernels/attention.h"

#include <cmath>

#include "crew/autograd/autocast.h"
#include "crew/autograd/autograd.h"
#include "crew/autograd/function.h"
#include "crew/autograd/ops.h"
#include "crew/nn/functional.h"
#include "crew/tensor/kernels/broadcast.h"
#include "crew/tensor/kernels/gemm.h"
#include "crew/tensor/kernels/low_precision.h"
#include "crew/tensor/kernels/softmax_rows.h"

namespace crew::nn::functional {
namespace {

void check_attention(const Tensor& q, const Tensor& k, const Tensor& v) {
  kernels::check_floating_or_half(q, "scaled_dot_product_attention");
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

// Saved for the backward: Q, K, V as given (a packed qkv in all three), the probabilities P
// and the scale.
struct AttentionSaved {
  Tensor q, k, v, p;
  double scale = 0;
};

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

// float64: P = softmax(mask(scale Q K^T)) into s.p; returns O = P V as [B, T_q, H, D].
Tensor forward_f64(AttentionSaved& s, bool is_causal) {
  s.p = kernels::matmul(swap_time_heads(s.q, s.scale), swap_time_heads(s.k), false, true);
  kernels::attention_mask_softmax_(s.p, is_causal);
  return swap_time_heads(kernels::matmul(s.p, swap_time_heads(s.v), false, false));
}

double default_scale(double scale, int64_t d) {
  return scale == 0 ? 1.0 / std::sqrt(static_cast<double>(d)) : scale;
}

}  // namespace

Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v, bool is_causal,
                                    double scale) {
  if (auto in = amp::autocast_operands("scaled_dot_product_attention", q, k, v)) {
    return scaled_dot_product_attention((*in)[0], (*in)[1], (*in)[2], is_causal, scale);
  }
  check_attention(q, k, v);
  AttentionSaved s{q.detach(), k.detach(), v.detach(), Tensor(), default_scale(scale, q.size(3))};
  Tensor y;
  const bool on_kernel = q.dtype() != DType::FLOAT64;  // float32 and 16-bit
  if (on_kernel) {
    std::tie(y, s.p) = kernels::attention_forward(s.q, s.k, s.v, 0, s.scale, is_causal);
  } else {
    y = forward_f64(s, is_causal);
  }
  if (autograd::should_record({&q, &k, &v})) {
    autograd::record(y, "scaled_dot_product_attention", {q, k, v},
                     [s, on_kernel, is_causal](const Tensor& g, const std::vector<bool>& needs) {
                       return on_kernel ? kernels::attention_backward(s.q, s.k, s.v, s.p, g, 0, s.scale,
                                                                      is_causal, needs)
                                        : backward_f64(s, g, needs);
                     },
                     {q, k, v});
  }
  return y;
}

Tensor packed_qkv_attention(const Tensor& qkv, int64_t num_heads, bool is_causal, double scale) {
  if (auto in = amp::autocast_operands("packed_qkv_attention", qkv)) {
    return packed_qkv_attention((*in)[0], num_heads, is_causal, scale);
  }
  kernels::check_floating_or_half(qkv, "packed_qkv_attention");
  CREW_CHECK(qkv.dim() == 3 && num_heads > 0 && qkv.size(2) % (3 * num_heads) == 0,
             "packed_qkv_attention: qkv must be [B, T, 3 * H * D] for H = num_heads = ", num_heads, ", got ",
             shape_str(qkv.shape()));
  const int64_t b = qkv.size(0), t = qkv.size(1), c = qkv.size(2) / 3, d = c / num_heads;
  if (qkv.dtype() == DType::FLOAT64) {  // float64: the composition (its own graph)
    std::vector<Tensor> parts = split(qkv, 3, -1);
    const Shape hs = {b, t, num_heads, d};
    return reshape(scaled_dot_product_attention(reshape(parts[0], hs), reshape(parts[1], hs),
                                                reshape(parts[2], hs), is_causal, scale),
                   {b, t, c});
  }
  const Tensor packed = qkv.detach();
  AttentionSaved s{packed, packed, packed, Tensor(), default_scale(scale, d)};
  Tensor y;
  std::tie(y, s.p) = kernels::attention_forward(packed, packed, packed, num_heads, s.scale, is_causal);
  if (autograd::should_record({&qkv})) {
    autograd::record(y, "packed_qkv_attention", {qkv},
                     [s, num_heads, is_causal](const Tensor& g, const std::vector<bool>&) {
                       return kernels::attention_backward(s.q, s.q, s.q, s.p, g, num_heads, s.scale,
                                                          is_causal, {true, true, true});
                     },
                     {qkv});
  }
  return y;
}

}  // namespace crew::nn::functional
