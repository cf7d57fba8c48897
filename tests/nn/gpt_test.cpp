// GPT: keys and shapes, the tied embedding, causality, and that a few steps learn.
#include "crew/nn/models/gpt.h"

#include <gtest/gtest.h>

#include "crew/autograd/autograd.h"
#include "crew/nn/functional.h"
#include "crew/tensor/random.h"

namespace crew::nn::models {
namespace {

const GPTConfig kSmall{.vocab_size = 16, .block_size = 8, .n_layer = 2, .n_head = 2, .n_embd = 8};

TEST(GPT, KeysShapesAndOneTiedEmbedding) {
  GPT gpt(kSmall);
  StateDict sd = gpt.state_dict();
  const std::pair<const char*, Shape> expected[] = {
      {"wte.weight", {16, 8}},          {"wpe.weight", {8, 8}},
      {"h.0.ln_1.weight", {8}},         {"h.0.attn.c_attn.weight", {8, 24}},
      {"h.0.attn.c_attn.bias", {24}},   {"h.1.attn.c_proj.weight", {8, 8}},
      {"h.1.mlp.c_fc.weight", {8, 32}}, {"h.1.mlp.c_proj.weight", {32, 8}},
      {"h.1.ln_2.bias", {8}},           {"ln_f.weight", {8}},
  };
  for (const auto& [key, shape] : expected) {
    ASSERT_TRUE(sd.contains(key)) << key;
    EXPECT_EQ(sd.at(key).shape(), shape) << key;
  }
  // 2 embeddings + 12 per block + ln_f's 2: the output projection is wte, no extra key.
  EXPECT_EQ(sd.size(), 2u + 2u * 12u + 2u);
  int64_t n = 0;
  for (const auto& p : gpt.parameters()) n += p.numel();
  // wte 128 + wpe 64 + per block (16 + 216 + 72 + 16 + 288 + 264) + ln_f 16
  EXPECT_EQ(n, 128 + 64 + 2 * (16 + 216 + 72 + 16 + 288 + 264) + 16);
  EXPECT_FLOAT_EQ(sd.at("h.0.ln_1.weight").data<float>()[0], 1.0f);
  EXPECT_FLOAT_EQ(sd.at("h.0.attn.c_attn.bias").data<float>()[0], 0.0f);
}

TEST(GPT, LogitsAtAPositionDependOnlyOnEarlierTokens) {
  crew::seed(2);
  GPT gpt(kSmall);
  NoGradGuard no_grad;
  Tensor a = Tensor::from_vector<int64_t>({1, 2, 3, 4, 5, 6}, {1, 6});
  Tensor b = Tensor::from_vector<int64_t>({1, 2, 3, 9, 9, 9}, {1, 6});
  Tensor la = gpt(a), lb = gpt(b);
  ASSERT_EQ(la.shape(), (Shape{1, 6, 16}));
  for (int64_t k = 0; k < 3 * 16; ++k) EXPECT_FLOAT_EQ(la.data<float>()[k], lb.data<float>()[k]) << k;
  double diff = 0;
  for (int64_t k = 3 * 16; k < 6 * 16; ++k) diff += std::abs(la.data<float>()[k] - lb.data<float>()[k]);
  EXPECT_GT(diff, 0.0);
  EXPECT_THROW(gpt(Tensor::zeros({1, 9}, DType::INT64)), ValueError);  // longer than block_size
  EXPECT_THROW(gpt(Tensor::zeros({1, 4})), ValueError);                // float tokens
}

TEST(GPT, TiedEmbeddingGetsBothGradientsAndTrainingLearns) {
  crew::seed(3);
  GPT gpt(kSmall);
  // A repeating sequence: predictable after a few steps.
  std::vector<int64_t> seq;
  for (int i = 0; i < 9; ++i) seq.push_back(i % 4);
  Tensor x = Tensor::from_vector<int64_t>(std::vector<int64_t>(seq.begin(), seq.end() - 1), {1, 8});
  Tensor y = Tensor::from_vector<int64_t>(std::vector<int64_t>(seq.begin() + 1, seq.end()), {1, 8});
  float first = 0, last = 0;
  for (int step = 0; step < 40; ++step) {
    Tensor loss = functional::cross_entropy(gpt(x), y);
    loss.backward();
    if (step == 0) {
      // Token 15 never appears in x: its wte row's gradient comes only from the output projection.
      const Tensor g = gpt.state_dict().at("wte.weight").grad();
      double row15 = 0;
      for (int64_t d = 0; d < 8; ++d) row15 += std::abs(g.data<float>()[15 * 8 + d]);
      EXPECT_GT(row15, 0.0);
      first = static_cast<float>(loss.item());
    }
    last = static_cast<float>(loss.item());
    for (Tensor& p : gpt.parameters()) {  // plain SGD (the optimizers are tested in tests/optim)
      float* w = p.data<float>();
      const float* g = p.grad().data<float>();
      for (int64_t k = 0; k < p.numel(); ++k) w[k] -= 0.5f * g[k];
    }
    gpt.clear_gradients();
  }
  EXPECT_LT(last, 0.5f * first);
  std::vector<int64_t> sample = gpt.generate({0, 1}, 5);
  EXPECT_EQ(sample.size(), 5u);
  for (int64_t t : sample) EXPECT_TRUE(t >= 0 && t < 16);
}

}  // namespace
}  // namespace crew::nn::models
