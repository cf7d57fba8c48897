// scaled_dot_product_attention and packed_qkv_attention: one autograd node each; products on
// oneDNN matmuls over strided views (float32), the row softmax on oneDNN's softmax primitives.
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

// Where one of Q, K, V lies: [B, T, H, D] rows `row` floats apart from `data` (row = H * D
// for a tensor of its own, 3 * H * D for a part of a packed [B, T, 3 * H * D] qkv).
struct HeadsLayout {
  float* data = nullptr;
  int64_t b = 0, t = 0, h = 0, d = 0, row = 0;
};
HeadsLayout layout_of(const Tensor& t) {  // a contiguous [B, T, H, D] tensor
  return {t.data<float>(), t.size(0), t.size(1), t.size(2), t.size(3), t.size(2) * t.size(3)};
}
HeadsLayout part_of(const Tensor& qkv, int64_t part, int64_t h) {  // [B, T, 3 * H * D], part 0..2
  const int64_t c = qkv.size(2) / 3;
  return {qkv.data<float>() + part * c, qkv.size(0), qkv.size(1), h, c / h, 3 * c};
}

// Saved for the backward: Q, K, V as given (tensors keep their storage alive; the layouts say
// where they are), the probabilities P and the scale.
struct AttentionSaved {
  Tensor q, k, v, p;
  double scale;
  HeadsLayout lq, lk, lv;  // float32 only
};

// float32: every product is one oneDNN matmul over strided views, [B, T, H, D] data read and
// written as [B, H, T, D] (or transposed) without a copy, the scale an output scale.
kernels::MatrixView heads(const HeadsLayout& l) {  // [B, T, H, D] as [B, H, T, D]
  return {l.data, {l.b, l.h, l.t, l.d}, {l.t * l.row, l.d, l.row, 1}};
}
kernels::MatrixView heads_t(const HeadsLayout& l) {  // [B, T, H, D] as [B, H, D, T]
  return {l.data, {l.b, l.h, l.d, l.t}, {l.t * l.row, l.d, 1, l.row}};
}
kernels::MatrixView scores(const Tensor& p) {  // [B, H, T_q, T_k] as it is
  const int64_t b = p.size(0), h = p.size(1), tq = p.size(2), tk = p.size(3);
  return {p.data<float>(), {b, h, tq, tk}, {h * tq * tk, tq * tk, tk, 1}};
}
kernels::MatrixView scores_t(const Tensor& p) {  // [B, H, T_q, T_k] as [B, H, T_k, T_q]
  const int64_t b = p.size(0), h = p.size(1), tq = p.size(2), tk = p.size(3);
  return {p.data<float>(), {b, h, tk, tq}, {h * tq * tk, tq * tk, 1, tk}};
}

// The gradients' destinations: dq, dk, dv (each optional) with their layouts.
struct AttentionGrads {
  HeadsLayout dq, dk, dv;
};

void backward_f32(const AttentionSaved& s, const HeadsLayout& g, const AttentionGrads& out) {
  const float scale = static_cast<float>(s.scale);
  if (out.dv.data) kernels::matmul_views(scores_t(s.p), heads(g), heads(out.dv));  // dV = P^T dO
  if (!out.dq.data && !out.dk.data) return;
  Tensor dp = Tensor::uninitialized(s.p.shape());
  kernels::matmul_views(heads(g), heads_t(s.lv), scores(dp));  // dP = dO V^T
  const Tensor ds = kernels::softmax_rows_backward(s.p, dp);   // dS = P * (dP - rowsum(dP * P))
  if (out.dq.data) kernels::matmul_views(scores(ds), heads(s.lk), heads(out.dq), scale);  // dQ = scale dS K
  if (out.dk.data)
    kernels::matmul_views(scores_t(ds), heads(s.lq), heads(out.dk), scale);  // dK = scale dS^T Q
}

std::vector<Tensor> backward_separate_f32(const AttentionSaved& s, const Tensor& g,
                                          const std::vector<bool>& needs) {
  std::vector<Tensor> grads(3);
  AttentionGrads out;
  HeadsLayout* dst[3] = {&out.dq, &out.dk, &out.dv};
  const Tensor* src[3] = {&s.q, &s.k, &s.v};
  for (int i = 0; i < 3; ++i) {
    if (!needs[i]) continue;
    grads[i] = Tensor::uninitialized(src[i]->shape());
    *dst[i] = layout_of(grads[i]);
  }
  backward_f32(s, layout_of(g), out);
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

// float32: S = scale Q K^T into s.p ([B, H, T_q, T_k]), the caller's mask and softmax
// (`finish`), then O = P V written through `y` (a [B, T_q, H, D] layout).
template <typename Finish>
void forward_f32(AttentionSaved& s, const HeadsLayout& y, const Finish& finish) {
  s.p = Tensor::uninitialized({s.lq.b, s.lq.h, s.lq.t, s.lk.t});
  kernels::matmul_views(heads(s.lq), heads_t(s.lk), scores(s.p), static_cast<float>(s.scale));
  finish();
  kernels::matmul_views(scores(s.p), heads(s.lv), heads(y));
}

// float64: the same on transposed copies; returns O as [B, T_q, H, D].
template <typename Finish>
Tensor forward_f64(AttentionSaved& s, const Finish& finish) {
  s.p = kernels::matmul(swap_time_heads(s.q, s.scale), swap_time_heads(s.k), false, true);
  finish();
  return swap_time_heads(kernels::matmul(s.p, swap_time_heads(s.v), false, false));
}

// The causal mask and the row softmax of s.p.
void mask_and_softmax(AttentionSaved& s, bool is_causal) {
  const int64_t b = s.p.size(0), h = s.p.size(1), tq = s.p.size(2), tk = s.p.size(3);
  if (is_causal && tk > 0) {
    dispatch_dtype(s.p.dtype(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_floating_point_v<T>) mask_future(s.p.data<T>(), b * h, tq, tk);
    });
  }
  kernels::softmax_rows_(s.p);
}

double default_scale(double scale, int64_t d) {
  return scale == 0 ? 1.0 / std::sqrt(static_cast<double>(d)) : scale;
}

}  // namespace

Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v, bool is_causal,
                                    double scale) {
  check_attention(q, k, v);
  AttentionSaved s{q.detach(), k.detach(), v.detach(), Tensor(), default_scale(scale, q.size(3)), {}, {}, {}};
  Tensor y;
  if (q.dtype() == DType::FLOAT32) {
    s.lq = layout_of(s.q), s.lk = layout_of(s.k), s.lv = layout_of(s.v);
    y = Tensor::uninitialized(q.shape());
    forward_f32(s, layout_of(y), [&] { mask_and_softmax(s, is_causal); });
  } else {
    y = forward_f64(s, [&] { mask_and_softmax(s, is_causal); });
  }
  if (autograd::should_record({&q, &k, &v})) {
    autograd::record(
        y, "scaled_dot_product_attention", {q, k, v}, [s](const Tensor& g, const std::vector<bool>& needs) {
          return g.dtype() == DType::FLOAT32 ? backward_separate_f32(s, g, needs) : backward_f64(s, g, needs);
        });
  }
  return y;
}

Tensor packed_qkv_attention(const Tensor& qkv, int64_t num_heads, bool is_causal, double scale) {
  kernels::check_floating(qkv, "packed_qkv_attention");
  CREW_CHECK(qkv.dim() == 3 && num_heads > 0 && qkv.size(2) % (3 * num_heads) == 0,
             "packed_qkv_attention: qkv must be [B, T, 3 * H * D] for H = num_heads = ", num_heads, ", got ",
             shape_str(qkv.shape()));
  const int64_t b = qkv.size(0), t = qkv.size(1), c = qkv.size(2) / 3;
  if (qkv.dtype() != DType::FLOAT32) {  // float64: the composition (its own graph)
    std::vector<Tensor> parts = split(qkv, 3, -1);
    const Shape heads_shape = {b, t, num_heads, c / num_heads};
    return reshape(
        scaled_dot_product_attention(reshape(parts[0], heads_shape), reshape(parts[1], heads_shape),
                                     reshape(parts[2], heads_shape), is_causal, scale),
        {b, t, c});
  }
  const Tensor packed = qkv.detach();
  AttentionSaved s{packed, packed, packed, Tensor(), default_scale(scale, c / num_heads), {}, {}, {}};
  s.lq = part_of(packed, 0, num_heads), s.lk = part_of(packed, 1, num_heads),
  s.lv = part_of(packed, 2, num_heads);
  Tensor y = Tensor::uninitialized({b, t, c});
  HeadsLayout ly = s.lq;
  ly.data = y.data<float>(), ly.row = c;
  forward_f32(s, ly, [&] { mask_and_softmax(s, is_causal); });
  if (autograd::should_record({&qkv})) {
    autograd::record(y, "packed_qkv_attention", {qkv}, [s, ly](const Tensor& g, const std::vector<bool>&) {
      Tensor dqkv = Tensor::uninitialized(s.q.shape());
      const int64_t h = s.lq.h;
      HeadsLayout lg = ly;
      lg.data = g.data<float>();
      backward_f32(s, lg, {part_of(dqkv, 0, h), part_of(dqkv, 1, h), part_of(dqkv, 2, h)});
      return std::vector<Tensor>{dqkv};
    });
  }
  return y;
}

}  // namespace crew::nn::functional
