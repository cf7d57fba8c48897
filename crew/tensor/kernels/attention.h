#pragma once
// Attention on oneDNN matmuls over strided views: Q, K, V read where they lie ([B, T, H, D]
// tensors of their own or parts of a packed qkv), no transposing copies, the scale an output
// scale. float32, or bfloat16/float16 with float32 scores, softmax and accumulation (the
// float32 kernel on converted operands where oneDNN has no kernel for the 16-bit dtype). Causal attention
// with T_q = T_k works on blocks of query rows and skips the products with the masked keys (about a quarter
// of the work at T = 128, half at long T). crew::nn::functional::scaled_dot_product_attention and
// packed_qkv_attention wrap these.
#include <cstdint>
#include <utility>
#include <vector>

#include "crew/tensor/kernels/dispatch.h"
#include "crew/tensor/tensor.h"

namespace crew::kernels {

// Operands: q, k, v contiguous [B, T, H, D] of one dtype, float32, bfloat16 or float16
// (packed_heads = 0), or q one contiguous packed [B, T, 3 * H * D] qkv with H = packed_heads
// (k and v then unused, pass q). Returns O (q's shape; [B, T, H * D] packed) and the
// probabilities P [B, H, T_q, T_k] that the backward needs, both of q's dtype.
std::pair<Tensor, Tensor> attention_forward(const Tensor& q, const Tensor& k, const Tensor& v,
                                            int64_t packed_heads, double scale, bool causal);
// From P and dO: {dQ, dK, dV} (undefined where needs[i] is false), or {dqkv} when packed; of
// q's dtype (dO is converted to it when it differs).
std::vector<Tensor> attention_backward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& p,
                                       const Tensor& grad_y, int64_t packed_heads, double scale, bool causal,
                                       const std::vector<bool>& needs);
// In place on scores [B, H, T_q, T_k] (float32 or float64): masks keys after their query
// (-inf) when causal, then the row softmax.
void attention_mask_softmax_(const Tensor& scores, bool causal);

using AttentionForwardFn = std::pair<Tensor, Tensor>(const Tensor& q, const Tensor& k, const Tensor& v,
                                                     int64_t packed_heads, double scale, bool causal);
using AttentionBackwardFn = std::vector<Tensor>(const Tensor& q, const Tensor& k, const Tensor& v,
                                                const Tensor& p, const Tensor& grad_y, int64_t packed_heads,
                                                double scale, bool causal, const std::vector<bool>& needs);
using AttentionMaskSoftmaxFn = void(const Tensor& scores, bool causal);
extern KernelSlot<AttentionForwardFn> attention_forward_kernel;
extern KernelSlot<AttentionBackwardFn> attention_backward_kernel;
extern KernelSlot<AttentionMaskSoftmaxFn> attention_mask_softmax_kernel;

}  // namespace crew::kernels
