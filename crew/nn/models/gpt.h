#pragma once
// GPT: a GPT-2 style decoder-only transformer over bytes (vocab 256 by default).
//   x = wte(idx) + wpe(positions)                        idx int64 [B, T], T <= block_size
//   block i (h.{i}):  x += attn.c_proj(causal_attention(split_qkv(attn.c_attn(ln_1(x)))))
//                     x += mlp.c_proj(gelu(mlp.c_fc(ln_2(x))))
//   logits = ln_f(x) @ wte.weight^T                       [B, T, vocab] (tied, no bias)
// attn.c_attn is Linear(n, 3n) with q, k, v in that order along its output; heads split the
// channels (head_dim = n / n_head); scale 1/sqrt(head_dim); GELU exact (erf); LayerNorm eps
// 1e-5; Linear weights [in, out]. Keys: wte.weight, wpe.weight, h.0.ln_1.weight, ...,
// h.0.attn.c_attn.weight, h.0.attn.c_proj.bias, h.0.mlp.c_fc.weight, ..., ln_f.bias.
// Init (GPT-2's): Linear and Embedding weights ~ N(0, 0.02), the residual projections
// (attn.c_proj, mlp.c_proj) ~ N(0, 0.02 / sqrt(2 * n_layer)), biases 0, LayerNorms (1, 0).
//
//   auto gpt = std::make_shared<crew::nn::models::GPT>(GPTConfig{.n_layer = 4});
//   Tensor logits = (*gpt)(tokens);                 // [B, T] int64 -> [B, T, 256]
#include <cstdint>
#include <memory>
#include <vector>

#include "crew/nn/dropout.h"
#include "crew/nn/embedding.h"
#include "crew/nn/layer.h"
#include "crew/nn/layer_norm.h"
#include "crew/nn/linear.h"
#include "crew/nn/sequential.h"
#include "crew/tensor/random.h"

namespace crew::nn::models {

struct GPTConfig {
  int64_t vocab_size = 256;
  int64_t block_size = 128;
  int64_t n_layer = 4;
  int64_t n_head = 4;
  int64_t n_embd = 256;
  double dropout = 0.0;
};

class CausalSelfAttention : public Layer {
 public:
  explicit CausalSelfAttention(const GPTConfig& config);
  Tensor forward(const Tensor& x) override;  // [B, T, n] -> [B, T, n]

 private:
  int64_t n_head_, n_embd_;
  std::shared_ptr<Linear> c_attn_, c_proj_;
  std::shared_ptr<Dropout> resid_dropout_;
};

class GPTMLP : public Layer {
 public:
  explicit GPTMLP(const GPTConfig& config);
  Tensor forward(const Tensor& x) override;

 private:
  std::shared_ptr<Linear> c_fc_, c_proj_;
  std::shared_ptr<Dropout> dropout_;
};

class GPTBlock : public Layer {
 public:
  explicit GPTBlock(const GPTConfig& config);
  Tensor forward(const Tensor& x) override;

 private:
  std::shared_ptr<LayerNorm> ln_1_, ln_2_;
  std::shared_ptr<CausalSelfAttention> attn_;
  std::shared_ptr<GPTMLP> mlp_;
};

class GPT : public Layer {
 public:
  explicit GPT(const GPTConfig& config = {});
  // idx int64 [B, T] -> logits [B, T, vocab_size].
  Tensor forward(const Tensor& idx) override;
  // Appends `count` tokens to prompt (int64 [T0], T0 >= 1), each sampled from the softmax of
  // the last position's logits / temperature (over the last block_size tokens), in eval mode
  // without gradients. Returns the new tokens only.
  std::vector<int64_t> generate(const std::vector<int64_t>& prompt, int64_t count, double temperature = 1.0,
                                Generator* gen = nullptr);
  const GPTConfig& config() const { return config_; }

 private:
  void init_weights();

  GPTConfig config_;
  std::shared_ptr<Embedding> wte_, wpe_;
  std::shared_ptr<Dropout> drop_;
  std::shared_ptr<Sequential> h_;  // the GPTBlocks
  std::shared_ptr<LayerNorm> ln_f_;
};

}  // namespace crew::nn::models
