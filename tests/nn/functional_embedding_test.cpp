// embedding: row lookup, accumulated gradients of repeated ids, padding_idx, errors.
#include "tests/nn/functional_test_util.h"

namespace crew {
namespace {

using namespace nn::functional_testing;

TEST(FunctionalEmbeddingTest, LooksUpRows) {
  Tensor w = Tensor::arange(12, DType::FLOAT32).view({4, 3});
  Tensor ids = Tensor::from_vector<int64_t>({3, 0, 3, 1}, {2, 2});
  Tensor y = F::embedding(ids, w);
  ASSERT_EQ(y.shape(), (Shape{2, 2, 3}));
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{9, 10, 11, 0, 1, 2, 9, 10, 11, 3, 4, 5}));
  EXPECT_EQ(F::embedding(Tensor::from_vector<int32_t>({2}, {1}), w).to_vector<float>(),
            (std::vector<float>{6, 7, 8}));
}

TEST(FunctionalEmbeddingTest, RepeatedIdsAccumulateGradient) {
  Tensor w = random_input({5, 3});
  Tensor ids = Tensor::from_vector<int64_t>({1, 4, 1, 1, 0, 4}, {2, 3});
  expect_gradients_match([&](const Inputs& in) { return F::embedding(ids, in[0]); }, {w});
  w.clear_grad();
  sum(F::embedding(ids, w)).backward();
  const auto g = w.grad().to_vector<double>();
  const std::vector<double> counts{1, 3, 0, 0, 2};
  for (int64_t v = 0; v < 5; ++v)
    for (int64_t d = 0; d < 3; ++d) EXPECT_EQ(g[v * 3 + d], counts[v]) << v;
}

TEST(FunctionalEmbeddingTest, PaddingIdxGivesZerosAndNoGradient) {
  Tensor w = random_input({4, 2});
  Tensor ids = Tensor::from_vector<int64_t>({2, 0, 2}, {3});
  Tensor y = F::embedding(ids, w, 2);
  const auto yv = y.to_vector<double>(), wv = w.to_vector<double>();
  EXPECT_EQ(yv[0], 0.0);
  EXPECT_EQ(yv[1], 0.0);
  EXPECT_EQ(yv[2], wv[0]);
  sum(y).backward();
  const auto g = w.grad().to_vector<double>();
  EXPECT_EQ(g[4], 0.0);
  EXPECT_EQ(g[5], 0.0);
  EXPECT_EQ(g[0], 1.0);
}

TEST(FunctionalEmbeddingTest, RejectsBadIds) {
  Tensor w = Tensor::zeros({4, 2});
  EXPECT_THROW(F::embedding(Tensor::from_vector<int64_t>({0, 4}, {2}), w), IndexError);
  EXPECT_THROW(F::embedding(Tensor::from_vector<int64_t>({-1}, {1}), w), IndexError);
  EXPECT_THROW(F::embedding(Tensor::from_vector<float>({0}, {1}), w), ValueError);
  EXPECT_THROW(F::embedding(Tensor::from_vector<int64_t>({0}, {1}), Tensor::zeros({4})), ValueError);
  EXPECT_THROW(F::embedding(Tensor::from_vector<int64_t>({0}, {1}), w, 4), ValueError);
  try {
    F::embedding(Tensor::from_vector<int64_t>({0, 7}, {2}), w);
    FAIL() << "no error";
  } catch (const IndexError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("id 7"), std::string::npos) << msg;
    EXPECT_NE(msg.find("V = 4"), std::string::npos) << msg;
  }
}

}  // namespace
}  // namespace crew
