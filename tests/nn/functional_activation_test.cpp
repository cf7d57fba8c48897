// Gradient checks and values of activations, softmax, log_softmax, flatten, dropout.
#include <cmath>

#include "tests/nn/functional_test_util.h"

namespace crew {
namespace {

using namespace nn::functional_testing;

TEST(FunctionalActivationTest, GradientsFloat64) {
  Tensor x = random_input({3, 5});
  expect_gradients_match([](const Inputs& in) { return F::relu(in[0]); }, {x});
  expect_gradients_match([](const Inputs& in) { return F::sigmoid(in[0]); }, {x});
  expect_gradients_match([](const Inputs& in) { return F::tanh(in[0]); }, {x});
  expect_gradients_match([](const Inputs& in) { return F::gelu(in[0]); }, {x});
  expect_gradients_match([](const Inputs& in) { return F::gelu(in[0], true); }, {x});
}

TEST(FunctionalActivationTest, GradientsFloat32OneDnn) {
  Tensor x = random_input({4, 6}, DType::FLOAT32);
  for (int kind = 0; kind < 5; ++kind) {
    expect_gradients_match(
        [kind](const Inputs& in) {
          switch (kind) {
            case 0:
              return F::relu(in[0]);
            case 1:
              return F::sigmoid(in[0]);
            case 2:
              return F::tanh(in[0]);
            case 3:
              return F::gelu(in[0]);
            default:
              return F::gelu(in[0], true);
          }
        },
        {x}, testing::float32_options());
  }
}

TEST(FunctionalActivationTest, SoftmaxAndLogSoftmax) {
  Tensor x = random_input({2, 3, 4});
  for (int64_t axis : {0, 1, -1}) {
    expect_gradients_match([axis](const Inputs& in) { return F::softmax(in[0], axis); }, {x});
    expect_gradients_match([axis](const Inputs& in) { return F::log_softmax(in[0], axis); }, {x});
  }
  // Stable for large logits; rows sum to one.
  Tensor big = Tensor::from_vector<float>({1000, 1001, 1002}, {1, 3});
  const auto p = F::softmax(big).to_vector<double>();
  EXPECT_NEAR(p[0] + p[1] + p[2], 1.0, 1e-6);
  EXPECT_NEAR(p[2], std::exp(2.0) / (1 + std::exp(1.0) + std::exp(2.0)), 1e-6);
  const auto lp = F::log_softmax(big).to_vector<double>();
  EXPECT_NEAR(lp[2], std::log(p[2]), 1e-5);
}

TEST(FunctionalActivationTest, FlattenAxes) {
  Tensor x = random_input({2, 3, 4, 5});
  EXPECT_EQ(F::flatten(x).shape(), (Shape{2, 60}));
  EXPECT_EQ(F::flatten(x, 0, -1).shape(), (Shape{120}));
  EXPECT_EQ(F::flatten(x, 1, 2).shape(), (Shape{2, 12, 5}));
  expect_gradients_match([](const Inputs& in) { return F::flatten(in[0], 1, 2); }, {x});
  EXPECT_THROW(F::flatten(x, 2, 1), ValueError);
}

TEST(FunctionalActivationTest, DropoutScalesKeptElementsAndIsSeeded) {
  Tensor x = Tensor::ones({1000}, DType::FLOAT64).set_stop_gradient(false);
  Generator g1(42), g2(42);
  Tensor a = F::dropout(x, 0.3, true, &g1);
  Tensor b = F::dropout(x, 0.3, true, &g2);
  EXPECT_EQ(a.to_vector<double>(), b.to_vector<double>());
  int kept = 0;
  for (double v : a.to_vector<double>()) {
    ASSERT_TRUE(v == 0.0 || std::fabs(v - 1.0 / 0.7) < 1e-12) << v;
    kept += v != 0.0;
  }
  EXPECT_GT(kept, 600);
  EXPECT_LT(kept, 800);
  // The gradient is the same mask.
  sum(a).backward();
  EXPECT_EQ(x.grad().to_vector<double>(), a.to_vector<double>());
  // Inference and p = 0 are the identity; p = 1 drops everything.
  EXPECT_TRUE(F::dropout(x, 0.5, false).is_same(x));
  EXPECT_TRUE(F::dropout(x, 0.0, true).is_same(x));
  for (double v : F::dropout(x, 1.0, true).to_vector<double>()) EXPECT_EQ(v, 0.0);
  EXPECT_THROW(F::dropout(x, 1.5), ValueError);
}

}  // namespace
}  // namespace crew
