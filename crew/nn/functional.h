#pragma once
// crew::nn::functional: the differentiable layer operations (Paddle's paddle.nn.functional).
// Layouts: images NCHW; conv weight [out, in/groups, kh, kw]; linear weight [in, out]
// (Paddle's layout); labels int64 of shape [N] or [N, 1].
// The general tensor ops (add, matmul, sum, reshape, ...) are in crew/autograd/ops.h.
#include <array>
#include <cstdint>
#include <memory>

#include "crew/nn/batch_norm_sync.h"
#include "crew/tensor/random.h"
#include "crew/tensor/tensor.h"

namespace crew::nn::functional {

using Pair = std::array<int64_t, 2>;
enum class Reduction { MEAN, SUM, NONE };

// x [N, C, H, W], weight [O, C/groups, kh, kw], bias [O] or undefined -> [N, O, H', W'].
Tensor conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias, Pair stride = {1, 1},
              Pair padding = {0, 0}, Pair dilation = {1, 1}, int64_t groups = 1);
// stride {0, 0} means stride = kernel (Paddle's default).
Tensor max_pool2d(const Tensor& x, Pair kernel, Pair stride = {0, 0}, Pair padding = {0, 0});
Tensor avg_pool2d(const Tensor& x, Pair kernel, Pair stride = {0, 0}, Pair padding = {0, 0});
// x [N, C, H, W] -> [N, C, oh, ow]: the mean of bin (i, j), rows [floor(i H / oh),
// ceil((i + 1) H / oh)) and likewise for columns (Paddle's adaptive_avg_pool2d).
Tensor adaptive_avg_pool2d(const Tensor& x, Pair output_size);
// x [..., in], weight [in, out], bias [out] or undefined -> [..., out].
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias);

Tensor relu(const Tensor& x);
Tensor sigmoid(const Tensor& x);
Tensor tanh(const Tensor& x);
Tensor gelu(const Tensor& x, bool approximate = false);
Tensor softmax(const Tensor& x, int64_t axis = -1);
Tensor log_softmax(const Tensor& x, int64_t axis = -1);
// [N, d1, d2, ...] -> [N, d1*d2*...] for the default axes (Paddle's Flatten(1, -1)).
Tensor flatten(const Tensor& x, int64_t start_axis = 1, int64_t stop_axis = -1);
// Inverted dropout: scales kept elements by 1/(1-p) in training; identity otherwise.
Tensor dropout(const Tensor& x, double p = 0.5, bool training = true, Generator* gen = nullptr);
// x [N, C, ...]. Training: normalises with batch statistics and updates the running ones
// in place (running = momentum * running + (1 - momentum) * batch, Paddle's convention);
// inference: uses the running statistics. weight/bias [C] or undefined. With a sync
// (SyncBatchNorm), training uses the statistics of the batch of all ranks and backward gives
// that batch's input gradient (crew/nn/batch_norm_sync.h); null = per-process statistics.
// Float32 training with per-process statistics runs on oneDNN (crew/tensor/kernels/batch_norm.h).
Tensor batch_norm(const Tensor& x, Tensor& running_mean, Tensor& running_var, const Tensor& weight,
                  const Tensor& bias, bool training, double momentum = 0.9, double epsilon = 1e-5,
                  std::shared_ptr<BatchNormStatsSync> sync = nullptr);

// logits [..., K] (e.g. [N, K], [B, T, V]), labels int64 [...] or [..., 1] -> scalar (MEAN over
// all positions whose label is not ignore_index -100, SUM) or [...] (NONE).
Tensor cross_entropy(const Tensor& logits, const Tensor& labels, Reduction reduction = Reduction::MEAN);
Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::MEAN);
// Fraction of rows whose top-k logits contain the label; a float32 scalar, no gradient.
Tensor accuracy(const Tensor& logits, const Tensor& labels, int64_t k = 1);

// Normalises x over its trailing axes normalized_shape (Paddle's layer_norm): per row,
// (x - mean) / sqrt(var + epsilon) * weight + bias, var biased; weight/bias of
// normalized_shape or undefined. float32 on oneDNN layer_normalization.
Tensor layer_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight, const Tensor& bias,
                  double epsilon = 1e-5);
// ids int64 (or int32) of any shape, weight [V, D] -> [ids..., D]. An id outside [0, V) is an
// IndexError. padding_idx in [0, V): those ids give zero rows and no gradient (Paddle);
// -1 means none (crew's stand-in for Paddle's None: Paddle would read -1 as V - 1).
Tensor embedding(const Tensor& ids, const Tensor& weight, int64_t padding_idx = -1);
// Attention in Paddle's layout: q [B, T, H, D], k and v [B, T_k, H, D] -> [B, T, H, D];
// softmax(scale * Q K^T) V per (batch, head), scale 0 meaning 1 / sqrt(D). is_causal masks
// keys after their query (key j > query i). One graph node; it keeps the [B, H, T, T_k]
// probabilities for the backward.
Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v, bool is_causal = false,
                                    double scale = 0);
// The same attention on a packed projection: qkv [B, T, 3 * H * D] holding Q, K and V in that
// order along the last axis (a GPT's c_attn output, PyTorch's in_proj), H = num_heads ->
// [B, T, H * D]. float32 reads Q, K, V where they lie and writes the gradient of qkv in one
// buffer: no split copies, no zero-filled partial gradients to add up.
Tensor packed_qkv_attention(const Tensor& qkv, int64_t num_heads, bool is_causal = false, double scale = 0);

}  // namespace crew::nn::functional
