// LayerNorm and Embedding layers: parameters, state_dict keys, forward, errors.
#include <gtest/gtest.h>

#include "crew/autograd/ops.h"
#include "crew/nn/nn.h"

namespace crew {
namespace {

std::vector<std::string> names_of(const std::vector<std::pair<std::string, Tensor>>& params) {
  std::vector<std::string> out;
  for (const auto& p : params) out.push_back(p.first);
  return out;
}

TEST(LayerNormLayerTest, ParametersAndForward) {
  nn::LayerNorm ln(6);
  EXPECT_EQ(names_of(ln.named_parameters()), (std::vector<std::string>{"weight", "bias"}));
  EXPECT_EQ(ln.state_dict().keys(), (std::vector<std::string>{"weight", "bias"}));
  EXPECT_EQ(ln.weight().shape(), (Shape{6}));
  EXPECT_EQ(ln.weight().to_vector<float>(), std::vector<float>(6, 1.0f));
  EXPECT_EQ(ln.bias().to_vector<float>(), std::vector<float>(6, 0.0f));
  Tensor y = ln(Tensor::arange(12, DType::FLOAT32).view({2, 6}));
  ASSERT_EQ(y.shape(), (Shape{2, 6}));
  const auto yv = y.to_vector<float>();
  EXPECT_NEAR(yv[0] + yv[5], 0.0f, 1e-5f);  // symmetric row
  EXPECT_NEAR(yv[5], 5 / 2.0 / std::sqrt(35.0 / 12 + 1e-5), 1e-4);
  EXPECT_THROW(ln(Tensor::zeros({2, 5})), ValueError);
  EXPECT_THROW(nn::LayerNorm(0), ValueError);
}

TEST(EmbeddingLayerTest, ParametersAndForward) {
  nn::Embedding emb(10, 4);
  EXPECT_EQ(names_of(emb.named_parameters()), (std::vector<std::string>{"weight"}));
  EXPECT_EQ(emb.state_dict().keys(), (std::vector<std::string>{"weight"}));
  EXPECT_EQ(emb.weight().shape(), (Shape{10, 4}));
  const double bound = std::sqrt(6.0 / 14);
  for (float v : emb.weight().to_vector<float>()) EXPECT_LE(std::abs(v), bound);
  Tensor y = emb(Tensor::from_vector<int64_t>({1, 2, 3, 9, 0, 1}, {2, 3}));
  EXPECT_EQ(y.shape(), (Shape{2, 3, 4}));
  EXPECT_TRUE(y.requires_grad());
  EXPECT_THROW(emb(Tensor::from_vector<int64_t>({10}, {1})), IndexError);
  EXPECT_THROW(nn::Embedding(10, 4, 10), ValueError);
  nn::Embedding padded(10, 4, 0);
  EXPECT_EQ(padded(Tensor::from_vector<int64_t>({0}, {1})).to_vector<float>(), std::vector<float>(4, 0.0f));
}

}  // namespace
}  // namespace crew
