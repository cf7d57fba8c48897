// adaptive_avg_pool2d against a loop over Paddle's bins; gradients; the layer; errors.
#include "crew/nn/pooling.h"
#include "tests/nn/functional_test_util.h"

namespace crew {
namespace {

using namespace nn::functional_testing;

std::vector<double> reference(const Tensor& x, int64_t oh, int64_t ow) {
  const int64_t planes = x.size(0) * x.size(1), h = x.size(2), w = x.size(3);
  const auto xv = x.to_vector<double>();
  std::vector<double> y;
  for (int64_t p = 0; p < planes; ++p) {
    for (int64_t i = 0; i < oh; ++i) {
      const int64_t r0 = i * h / oh, r1 = ((i + 1) * h + oh - 1) / oh;
      for (int64_t j = 0; j < ow; ++j) {
        const int64_t c0 = j * w / ow, c1 = ((j + 1) * w + ow - 1) / ow;
        double s = 0;
        for (int64_t a = r0; a < r1; ++a)
          for (int64_t b = c0; b < c1; ++b) s += xv[(p * h + a) * w + b];
        y.push_back(s / static_cast<double>((r1 - r0) * (c1 - c0)));
      }
    }
  }
  return y;
}

TEST(FunctionalAdaptivePoolTest, MatchesReferenceBins) {
  for (DType dt : {DType::FLOAT32, DType::FLOAT64}) {
    Tensor x = random_input({2, 3, 7, 5}, dt, 1);
    for (F::Pair out : {F::Pair{1, 1}, F::Pair{3, 2}, F::Pair{7, 5}, F::Pair{4, 4}, F::Pair{9, 6}}) {
      Tensor y = F::adaptive_avg_pool2d(x, out);
      ASSERT_EQ(y.shape(), (Shape{2, 3, out[0], out[1]}));
      const auto got = y.to_vector<double>(), want = reference(x, out[0], out[1]);
      for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-5) << out[0] << "x" << out[1];
    }
  }
  // 1x1 is the plane mean (ResNet's global pool).
  Tensor x = Tensor::arange(8, DType::FLOAT32).view({1, 2, 2, 2});
  EXPECT_EQ(F::adaptive_avg_pool2d(x, {1, 1}).to_vector<float>(), (std::vector<float>{1.5f, 5.5f}));
}

TEST(FunctionalAdaptivePoolTest, Gradients) {
  Tensor x = random_input({1, 2, 5, 4});
  for (F::Pair out : {F::Pair{1, 1}, F::Pair{3, 3}, F::Pair{2, 3}}) {
    expect_gradients_match([out](const Inputs& in) { return F::adaptive_avg_pool2d(in[0], out); }, {x});
  }
}

TEST(FunctionalAdaptivePoolTest, LayerAndErrors) {
  nn::AdaptiveAvgPool2D pool(1);
  EXPECT_TRUE(pool.named_parameters().empty());
  EXPECT_EQ(pool(Tensor::zeros({2, 8, 7, 7})).shape(), (Shape{2, 8, 1, 1}));
  EXPECT_EQ(nn::AdaptiveAvgPool2D({2, 3})(Tensor::zeros({1, 1, 6, 6})).shape(), (Shape{1, 1, 2, 3}));
  EXPECT_THROW(pool(Tensor::zeros({8, 7, 7})), ValueError);
  EXPECT_THROW(nn::AdaptiveAvgPool2D(0), ValueError);
  EXPECT_THROW(F::adaptive_avg_pool2d(Tensor::zeros({1, 1, 4, 4}), {0, 1}), ValueError);
  EXPECT_THROW(F::adaptive_avg_pool2d(Tensor::zeros({1, 4, 4}), {1, 1}), ValueError);
}

}  // namespace
}  // namespace crew
