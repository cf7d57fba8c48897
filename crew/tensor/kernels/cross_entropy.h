#pragma once
// cross_entropy's fused log-softmax + NLL over the last axis of float32 / float64 logits
// [..., K] with int64 labels (one per row; math::kIgnoreIndex rows add nothing), and its
// gradient. Each row runs math::CrossEntropyRow. crew::nn::functional::cross_entropy wraps
// these and does the reduction.
#include <cstdint>
#include <tuple>

#include "crew/tensor/kernels/dispatch.h"
#include "crew/tensor/tensor.h"

namespace crew::kernels {

// (loss per row [...], softmax probabilities [..., K], rows not ignored). IndexError naming
// `op` when a label is outside [0, K) and not the ignore index.
std::tuple<Tensor, Tensor, int64_t> cross_entropy_forward(const Tensor& logits, const Tensor& labels);
// d loss / d logits from the forward's probabilities: grad_y [...] per row (per_row) or
// grad_y {} times `scale` (a mean or sum reduction) for every row.
Tensor cross_entropy_backward(const Tensor& probs, const Tensor& labels, const Tensor& grad_y, double scale,
                              bool per_row);

using CrossEntropyForwardFn = std::tuple<Tensor, Tensor, int64_t>(const Tensor& logits, const Tensor& labels);
using CrossEntropyBackwardFn = Tensor(const Tensor& probs, const Tensor& labels, const Tensor& grad_y,
                                      double scale, bool per_row);
extern KernelSlot<CrossEntropyForwardFn> cross_entropy_forward_kernel;
extern KernelSlot<CrossEntropyBackwardFn> cross_entropy_backward_kernel;

}  // namespace crew::kernels
