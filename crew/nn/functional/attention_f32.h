#pragma once
// float32 attention on oneDNN matmuls over strided views: Q, K, V read where they lie ([B, T,
// H, D] tensors of their own or parts of a packed qkv), no transposing copies, the scale an
// output scale. Causal attention with T_q = T_k works on blocks of query rows and skips the
// products with the masked keys (about a quarter of the work at T = 128, half at long T).
// Internal to crew/nn/functional/attention.cpp.
#include <cstdint>

#include "crew/tensor/tensor.h"

namespace crew::nn::functional::attention_detail {

// One of Q, K, V, O or their gradients as [B, T, H, D]: rows (time steps) `row` floats
// apart, batches `batch` floats apart, the heads' D values side by side.
struct HeadsLayout {
  float* data = nullptr;
  int64_t b = 0, t = 0, h = 0, d = 0, row = 0, batch = 0;
};
// A contiguous [B, T, H, D] tensor, or a contiguous [B, T, H * D] one with H = heads.
HeadsLayout heads_layout(const Tensor& t);
HeadsLayout heads_layout(const Tensor& t, int64_t heads);
// Part 0, 1 or 2 (Q, K, V) of a contiguous packed [B, T, 3 * H * D] tensor, H = heads.
HeadsLayout packed_part(const Tensor& qkv, int64_t part, int64_t heads);

struct AttentionInputs {
  HeadsLayout q, k, v;
  float scale = 1.0f;
  bool causal = false;
};

// Masks keys after their query (-inf) when causal, then the row softmax, in place on the
// [B, H, T_q, T_k] scores (float32 or float64).
void mask_and_softmax(Tensor& scores, bool causal);

// Returns the probabilities P [B, H, T_q, T_k] and writes O = P V through y.
Tensor attention_forward_f32(const AttentionInputs& in, const HeadsLayout& y);

// Where the gradients go; a null data pointer means that one is not wanted.
struct AttentionGrads {
  HeadsLayout dq, dk, dv;
};
// From P (the forward's) and dO, writes every element of the wanted gradients.
void attention_backward_f32(const AttentionInputs& in, const Tensor& p, const HeadsLayout& dout,
                            const AttentionGrads& out);

}  // namespace crew::nn::functional::attention_detail
