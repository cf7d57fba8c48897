// Gradient checks of conv2d, max/avg pooling and linear (float32 kernels and float64 linear).
#include <numeric>

#include "tests/nn/functional_test_util.h"

namespace crew {
namespace {

using namespace nn::functional_testing;

TEST(FunctionalConvTest, Conv2dGradientsWithStridePaddingDilationGroups) {
  Tensor x = random_input({2, 4, 7, 6}, DType::FLOAT32, 1);
  Tensor w = random_input({6, 2, 3, 3}, DType::FLOAT32, 2);
  Tensor b = random_input({6}, DType::FLOAT32, 3);
  expect_gradients_match(
      [](const Inputs& in) {
        return F::conv2d(in[0], in[1], in[2], {2, 1}, {1, 2}, {2, 1}, 2);
      },
      {x, w, b}, testing::float32_options());
}

TEST(FunctionalConvTest, Conv2dWithoutBiasAndFrozenInput) {
  Tensor x = testing::random_input({1, 3, 5, 5}, DType::FLOAT32, 4).set_stop_gradient(true);
  Tensor w = random_input({2, 3, 3, 3}, DType::FLOAT32, 5);
  expect_gradients_match([](const Inputs& in) { return F::conv2d(in[0], in[1], Tensor()); }, {x, w},
                         testing::float32_options());
  EXPECT_FALSE(x.grad().defined());
}

// A shuffled ramp: distinct values spaced 1/numel apart, so max pooling has no near-ties.
Tensor ramp_input(const Shape& s) {
  std::vector<float> v(shape_numel(s));
  std::iota(v.begin(), v.end(), 0.0f);
  Generator gen(11);
  for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[gen.next_u64() % i]);
  for (float& f : v) f /= static_cast<float>(v.size());
  return Tensor::from_vector(v, s).set_stop_gradient(false);
}

TEST(FunctionalConvTest, PoolingGradients) {
  testing::GradcheckOptions opt = testing::float32_options();
  opt.eps = 1e-3;
  Tensor x = ramp_input({2, 2, 5, 7});
  expect_gradients_match([](const Inputs& in) { return F::max_pool2d(in[0], {2, 2}); }, {x}, opt);
  expect_gradients_match(
      [](const Inputs& in) {
        return F::max_pool2d(in[0], {3, 3}, {2, 2}, {1, 1});
      },
      {x}, opt);
  expect_gradients_match([](const Inputs& in) { return F::avg_pool2d(in[0], {2, 2}); }, {x}, opt);
  expect_gradients_match(
      [](const Inputs& in) {
        return F::avg_pool2d(in[0], {3, 2}, {2, 1}, {1, 1});
      },
      {x}, opt);
}

TEST(FunctionalConvTest, PoolDefaultStrideIsTheKernel) {
  Tensor x =
      Tensor::from_vector<float>({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, {1, 1, 4, 4});
  EXPECT_EQ(F::max_pool2d(x, {2, 2}).to_vector<float>(), (std::vector<float>{6, 8, 14, 16}));
  EXPECT_EQ(F::avg_pool2d(x, {2, 2}).to_vector<float>(), (std::vector<float>{3.5, 5.5, 11.5, 13.5}));
  // Exclusive average: padding is left out of the divisor (the corner window holds 1 element).
  Tensor padded = F::avg_pool2d(x, {2, 2}, {2, 2}, {1, 1});
  EXPECT_EQ(padded.shape(), (Shape{1, 1, 3, 3}));
  EXPECT_FLOAT_EQ(padded.to_vector<float>()[0], 1.0f);
  EXPECT_FLOAT_EQ(padded.to_vector<float>()[1], 2.5f);
}

TEST(FunctionalConvTest, LinearGradientsFloat64AndFloat32) {
  Tensor x = random_input({5, 4});
  Tensor w = random_input({4, 3}, DType::FLOAT64, 2);
  Tensor b = random_input({3}, DType::FLOAT64, 3);
  expect_gradients_match([](const Inputs& in) { return F::linear(in[0], in[1], in[2]); }, {x, w, b});
  expect_gradients_match([](const Inputs& in) { return F::linear(in[0], in[1], Tensor()); },
                         {random_input({2, 3, 4}), w});
  expect_gradients_match([](const Inputs& in) { return F::linear(in[0], in[1], in[2]); },
                         {random_input({6, 4}, DType::FLOAT32), random_input({4, 3}, DType::FLOAT32, 2),
                          random_input({3}, DType::FLOAT32, 3)},
                         testing::float32_options());
}

TEST(FunctionalConvTest, LinearValuesUsePaddleWeightLayout) {
  Tensor x = Tensor::from_vector<float>({1, 2}, {1, 2});
  Tensor w = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});  // [in=2, out=3]
  Tensor b = Tensor::from_vector<float>({10, 20, 30}, {3});
  EXPECT_EQ(F::linear(x, w, b).to_vector<float>(), (std::vector<float>{19, 32, 45}));
  EXPECT_THROW(F::linear(x, Tensor::zeros({3, 2}), Tensor()), ValueError);
}

TEST(FunctionalConvTest, SeedNetShapes) {
  Tensor x = Tensor::zeros({2, 1, 28, 28});
  Tensor h =
      F::max_pool2d(F::relu(F::conv2d(x, Tensor::zeros({32, 1, 3, 3}), Tensor::zeros({32}))), {2, 2}, {2, 2});
  EXPECT_EQ(h.shape(), (Shape{2, 32, 13, 13}));
  h = F::max_pool2d(F::relu(F::conv2d(h, Tensor::zeros({64, 32, 3, 3}), Tensor::zeros({64}))), {2, 2},
                    {2, 2});
  EXPECT_EQ(h.shape(), (Shape{2, 64, 5, 5}));
  h = F::flatten(F::relu(F::conv2d(h, Tensor::zeros({64, 64, 3, 3}), Tensor::zeros({64}))));
  EXPECT_EQ(h.shape(), (Shape{2, 576}));
}

}  // namespace
}  // namespace crew
