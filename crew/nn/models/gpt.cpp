// GPT-2 style byte-level transformer (see gpt.h).
#include "crew/nn/models/gpt.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "crew/autograd/autograd.h"
#include "crew/autograd/ops.h"
#include "crew/core/check.h"
#include "crew/nn/functional.h"
#include "crew/nn/init.h"

namespace crew::nn::models {
namespace F = functional;

CausalSelfAttention::CausalSelfAttention(const GPTConfig& c)
    : Layer("causal_self_attention"), n_head_(c.n_head), n_embd_(c.n_embd) {
  CREW_CHECK(c.n_head > 0 && c.n_embd % c.n_head == 0, "GPT: n_embd ", c.n_embd,
             " must be a positive multiple of n_head ", c.n_head);
  c_attn_ = register_sublayer("c_attn", std::make_shared<Linear>(c.n_embd, 3 * c.n_embd));
  c_proj_ = register_sublayer("c_proj", std::make_shared<Linear>(c.n_embd, c.n_embd));
  if (c.dropout > 0)
    resid_dropout_ = register_sublayer("resid_dropout", std::make_shared<Dropout>(c.dropout));
}

Tensor CausalSelfAttention::forward(const Tensor& x) {
  Tensor y = (*c_proj_)(F::packed_qkv_attention((*c_attn_)(x), n_head_, /*is_causal=*/true));
  return resid_dropout_ ? (*resid_dropout_)(y) : y;
}

GPTMLP::GPTMLP(const GPTConfig& c) : Layer("gpt_mlp") {
  c_fc_ = register_sublayer("c_fc", std::make_shared<Linear>(c.n_embd, 4 * c.n_embd));
  c_proj_ = register_sublayer("c_proj", std::make_shared<Linear>(4 * c.n_embd, c.n_embd));
  if (c.dropout > 0) dropout_ = register_sublayer("dropout", std::make_shared<Dropout>(c.dropout));
}

Tensor GPTMLP::forward(const Tensor& x) {
  Tensor y = (*c_proj_)(F::gelu((*c_fc_)(x), /*approximate=*/false));
  return dropout_ ? (*dropout_)(y) : y;
}

GPTBlock::GPTBlock(const GPTConfig& c) : Layer("gpt_block") {
  ln_1_ = register_sublayer("ln_1", std::make_shared<LayerNorm>(c.n_embd, 1e-5));
  attn_ = register_sublayer("attn", std::make_shared<CausalSelfAttention>(c));
  ln_2_ = register_sublayer("ln_2", std::make_shared<LayerNorm>(c.n_embd, 1e-5));
  mlp_ = register_sublayer("mlp", std::make_shared<GPTMLP>(c));
}

Tensor GPTBlock::forward(const Tensor& x) {
  Tensor h = x + (*attn_)((*ln_1_)(x));
  return h + (*mlp_)((*ln_2_)(h));
}

GPT::GPT(const GPTConfig& c) : Layer("gpt"), config_(c) {
  CREW_CHECK(c.vocab_size > 0 && c.block_size > 0 && c.n_layer > 0, "GPT: vocab_size ", c.vocab_size,
             ", block_size ", c.block_size, " and n_layer ", c.n_layer, " must be positive");
  wte_ = register_sublayer("wte", std::make_shared<Embedding>(c.vocab_size, c.n_embd));
  wpe_ = register_sublayer("wpe", std::make_shared<Embedding>(c.block_size, c.n_embd));
  if (c.dropout > 0) drop_ = register_sublayer("drop", std::make_shared<Dropout>(c.dropout));
  h_ = register_sublayer("h", std::make_shared<Sequential>());  // keys h.0..., h.1...
  for (int64_t i = 0; i < c.n_layer; ++i) h_->append(std::make_shared<GPTBlock>(c));
  ln_f_ = register_sublayer("ln_f", std::make_shared<LayerNorm>(c.n_embd, 1e-5));
  init_weights();
}

void GPT::init_weights() {
  const double std_proj = 0.02 / std::sqrt(2.0 * static_cast<double>(config_.n_layer));
  for (auto& [name, p] : named_parameters()) {
    const bool proj = name.ends_with(".c_proj.weight");
    if (p.dim() >= 2) {
      init::normal_(p, 0.0, proj ? std_proj : 0.02);
    } else if (name.find("ln_") != std::string::npos && name.ends_with(".weight")) {
      init::constant_(p, 1.0);
    } else {
      init::constant_(p, 0.0);
    }
  }
}

Tensor GPT::forward(const Tensor& idx) {
  CREW_CHECK(idx.dim() == 2 && idx.dtype() == DType::INT64, full_name(),
             ": expected int64 tokens [B, T], got ", dtype_name(idx.dtype()), " ", shape_str(idx.shape()));
  const int64_t t = idx.size(1);
  CREW_CHECK(t >= 1 && t <= config_.block_size, full_name(), ": sequence length ", t, " exceeds block_size ",
             config_.block_size);
  Tensor x = (*wte_)(idx) + (*wpe_)(Tensor::arange(t).to(idx.place()));  // positions beside the tokens
  if (drop_) x = (*drop_)(x);
  x = (*h_)(x);
  x = (*ln_f_)(x);
  return matmul(x, wte_->weight(), false, /*transpose_b=*/true);
}

std::vector<int64_t> GPT::generate(const std::vector<int64_t>& prompt, int64_t count, double temperature,
                                   Generator* gen) {
  CREW_CHECK(!prompt.empty() && temperature > 0, "GPT::generate: needs a prompt (got ", prompt.size(),
             " tokens) and a positive temperature (got ", temperature, ")");
  Generator& g = gen ? *gen : default_generator();
  NoGradGuard no_grad;
  const bool was_training = training();
  eval();
  std::vector<int64_t> seq = prompt, out;
  for (int64_t n = 0; n < count; ++n) {
    const int64_t t = std::min<int64_t>(static_cast<int64_t>(seq.size()), config_.block_size);
    std::vector<int64_t> window(seq.end() - t, seq.end());
    Tensor logits = forward(Tensor::from_vector<int64_t>(window, {1, t}));
    const std::vector<double> last = logits.select(0).select(t - 1).to_vector<double>();
    std::vector<double> p(config_.vocab_size);
    const double mx = *std::max_element(last.begin(), last.end());
    double total = 0;
    for (int64_t v = 0; v < config_.vocab_size; ++v) total += p[v] = std::exp((last[v] - mx) / temperature);
    double r = g.uniform(0.0, total);
    int64_t pick = config_.vocab_size - 1;
    for (int64_t v = 0; v < config_.vocab_size; ++v) {
      if ((r -= p[v]) <= 0) {
        pick = v;
        break;
      }
    }
    seq.push_back(pick);
    out.push_back(pick);
  }
  if (was_training) train();
  return out;
}

}  // namespace crew::nn::models
