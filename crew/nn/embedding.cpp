#include "crew/nn/embedding.h"

#include "crew/core/check.h"
#include "crew/nn/functional.h"
#include "crew/nn/init.h"

namespace crew::nn {

Embedding::Embedding(int64_t num_embeddings, int64_t embedding_dim, int64_t padding_idx)
    : Layer("embedding"),
      num_embeddings_(num_embeddings),
      embedding_dim_(embedding_dim),
      padding_idx_(padding_idx) {
  CREW_CHECK(num_embeddings > 0 && embedding_dim > 0,
             "Embedding: sizes must be positive, got num_embeddings=", num_embeddings,
             " embedding_dim=", embedding_dim);
  CREW_CHECK(padding_idx == -1 || (padding_idx >= 0 && padding_idx < num_embeddings),
             "Embedding: padding_idx ", padding_idx, " must be -1 (none) or in [0, ", num_embeddings, ")");
  Tensor w = Tensor::empty({num_embeddings, embedding_dim});
  init::xavier_uniform_(w);
  weight_ = register_parameter("weight", w);
}

Tensor Embedding::forward(const Tensor& ids) { return functional::embedding(ids, weight_, padding_idx_); }

}  // namespace crew::nn
