#pragma once
// Embedding: Paddle's nn.Embedding, a lookup of int64 ids [...] in weight [V, D] -> [..., D].
// weight is initialised as Paddle's default for a layer weight (weight_attr=None):
// XavierUniform with fan_in = V, fan_out = D, i.e. U(-sqrt(6 / (V + D)), +sqrt(6 / (V + D))).
// padding_idx in [0, V) (-1: none) gives zero rows for that id and never a gradient.
//
//   Embedding wte(50257, 256);
//   Tensor h = wte(ids);              // ids [B, T] int64 -> [B, T, 256]
#include <cstdint>

#include "crew/nn/layer.h"

namespace crew::nn {

class Embedding : public Layer {
 public:
  Embedding(int64_t num_embeddings, int64_t embedding_dim, int64_t padding_idx = -1);

  Tensor forward(const Tensor& ids) override;

  Tensor weight() const { return weight_; }
  int64_t num_embeddings() const { return num_embeddings_; }
  int64_t embedding_dim() const { return embedding_dim_; }
  int64_t padding_idx() const { return padding_idx_; }

 private:
  int64_t num_embeddings_;
  int64_t embedding_dim_;
  int64_t padding_idx_;
  Tensor weight_;
};

}  // namespace crew::nn
