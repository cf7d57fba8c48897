#pragma once
// embedding: a row gather from weight [V, D] by int64 / int32 ids of any shape, and its
// backward, a scatter-add into [V, D]. crew::nn::functional::embedding wraps these.
#include <cstdint>

#include "crew/tensor/kernels/dispatch.h"
#include "crew/tensor/tensor.h"

namespace crew::kernels {

// [ids..., D]: row ids[i] of weight, zeros where ids[i] == padding_idx (-1: none). IndexError
// naming the id and its position when an id is outside [0, V).
Tensor embedding_forward(const Tensor& ids, const Tensor& weight, int64_t padding_idx);
// d loss / d weight [vocab, grad_y's last extent]: grad_y's rows summed by id, padding_idx's
// row left zero.
Tensor embedding_backward(const Tensor& grad_y, const Tensor& ids, int64_t vocab, int64_t padding_idx);

using EmbeddingForwardFn = Tensor(const Tensor& ids, const Tensor& weight, int64_t padding_idx);
using EmbeddingBackwardFn = Tensor(const Tensor& grad_y, const Tensor& ids, int64_t vocab,
                                   int64_t padding_idx);
extern KernelSlot<EmbeddingForwardFn> embedding_forward_kernel;
extern KernelSlot<EmbeddingBackwardFn> embedding_backward_kernel;

}  // namespace crew::kernels
