// Initialisers and the layers' default (Paddle) initialisation.
#include <gtest/gtest.h>

#include <cmath>

#include "crew/nn/nn.h"

namespace crew::nn {
namespace {

struct Stats {
  double mean = 0, stddev = 0, min = 1e300, max = -1e300;
};

Stats stats(const Tensor& t) {
  Stats s;
  std::vector<double> v = t.to_vector<double>();
  for (double x : v) {
    s.mean += x;
    s.min = std::min(s.min, x);
    s.max = std::max(s.max, x);
  }
  s.mean /= static_cast<double>(v.size());
  for (double x : v) s.stddev += (x - s.mean) * (x - s.mean);
  s.stddev = std::sqrt(s.stddev / static_cast<double>(v.size()));
  return s;
}

TEST(Init, ComputeFansFollowsPaddle) {
  EXPECT_EQ(init::compute_fans({784, 64}), (std::pair<int64_t, int64_t>{784, 64}));  // Linear [in, out]
  EXPECT_EQ(init::compute_fans({32, 3, 3, 3}), (std::pair<int64_t, int64_t>{27, 288}));
  EXPECT_EQ(init::compute_fans({5}), (std::pair<int64_t, int64_t>{5, 5}));
  EXPECT_THROW(init::compute_fans({}), ValueError);
}

TEST(Init, DistributionsHaveTheirMoments) {
  Tensor t = Tensor::empty({400, 100});
  init::xavier_uniform_(t);
  double a = std::sqrt(6.0 / 500.0);
  Stats s = stats(t);
  EXPECT_GE(s.min, -a);
  EXPECT_LE(s.max, a);
  EXPECT_NEAR(s.stddev, a / std::sqrt(3.0), 0.01 * a);
  init::kaiming_uniform_(t);
  EXPECT_NEAR(stats(t).stddev, std::sqrt(2.0 / 400.0), 0.002);
  init::kaiming_normal_(t);
  EXPECT_NEAR(stats(t).stddev, std::sqrt(2.0 / 400.0), 0.002);
  init::xavier_normal_(t, 2.0);
  EXPECT_NEAR(stats(t).stddev, 2.0 * std::sqrt(2.0 / 500.0), 0.003);
  init::normal_(t, 3.0, 0.5);
  EXPECT_NEAR(stats(t).mean, 3.0, 0.01);
  init::uniform_(t, 2.0, 4.0);
  EXPECT_GE(stats(t).min, 2.0);
  init::constant_(t, 0.25);
  EXPECT_EQ(stats(t).max, 0.25);
  Tensor ints = Tensor::zeros({3}, DType::INT64);
  EXPECT_THROW(init::normal_(ints, 0, 1), ValueError);
}

TEST(Init, LayerDefaultsAreSeededAndPaddleLike) {
  seed(3);
  Linear a(300, 100);
  seed(3);
  Linear b(300, 100);
  EXPECT_EQ(a.weight().to_vector<float>(), b.weight().to_vector<float>());
  EXPECT_EQ(a.weight().shape(), (Shape{300, 100}));
  EXPECT_LE(stats(a.weight()).max, std::sqrt(6.0 / 400.0));
  EXPECT_EQ(stats(a.bias()).max, 0.0);
  EXPECT_EQ(stats(a.bias()).min, 0.0);

  Conv2D conv(16, 64, 3);
  EXPECT_EQ(conv.weight().shape(), (Shape{64, 16, 3, 3}));
  EXPECT_NEAR(stats(conv.weight()).stddev, std::sqrt(2.0 / (16 * 9)), 0.01);
  EXPECT_EQ(stats(conv.bias()).max, 0.0);
  Conv2D nobias(4, 4, {1, 3}, {.bias = false});
  EXPECT_FALSE(nobias.bias().defined());
  EXPECT_EQ(nobias.parameters().size(), 1u);
  EXPECT_EQ(nobias.weight().shape(), (Shape{4, 4, 1, 3}));
}

}  // namespace
}  // namespace crew::nn
