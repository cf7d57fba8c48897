#pragma once
// Top-k accuracy's count: rows of logits [N, K] whose label ranks among the k largest (ties
// broken by class index, lower first). crew::nn::functional::accuracy wraps it.
#include <cstdint>

#include "crew/tensor/kernels/dispatch.h"
#include "crew/tensor/tensor.h"

namespace crew::kernels {

// The number of rows i with labels[i] (int64, [N] or [N, 1]) among the top k of logits[i];
// rows labelled math::kIgnoreIndex never count. IndexError for a label outside [0, K).
int64_t accuracy_count(const Tensor& logits, const Tensor& labels, int64_t k);

using AccuracyCountFn = int64_t(const Tensor& logits, const Tensor& labels, int64_t k);
extern KernelSlot<AccuracyCountFn> accuracy_count_kernel;

}  // namespace crew::kernels
