// conv2d_transpose and the parametrised activations (crew/nn/functional_extra.h):
// gradient checks, values, and conv2d_transpose as conv2d's adjoint.
#include "crew/nn/functional_extra.h"

#include <cmath>

#include "tests/nn/functional_test_util.h"

namespace crew {
namespace {

using namespace nn::functional_testing;

// Every activation at float64 (loops) and float32 (oneDNN eltwise for elu, swish, mish,
// hardtanh; loops for the rest), inputs spread over [-3, 3] to reach both sides of the kinks.
Tensor apply(int kind, const Tensor& x) {
  switch (kind) {
    case 0:
      return F::elu(x, 0.7);
    case 1:
      return F::selu(x);
    case 2:
      return F::swish(x);
    case 3:
      return F::mish(x);
    case 4:
      return F::hardsigmoid(x, 0.2, 0.4);
    case 5:
      return F::hardtanh(x, -0.5, 1.5);
    case 6:
      return F::softsign(x);
    default:
      return F::tanhshrink(x);
  }
}

double reference(int kind, double x) {
  const double a = 1.6732632423543772848170429916717, s = 1.0507009873554804934193349852946;
  switch (kind) {
    case 0:
      return x > 0 ? x : 0.7 * std::expm1(x);
    case 1:
      return s * (x > 0 ? x : a * std::expm1(x));
    case 2:
      return x / (1 + std::exp(-x));
    case 3:
      return x * std::tanh(std::log1p(std::exp(x)));
    case 4:
      return std::min(1.0, std::max(0.0, 0.2 * x + 0.4));
    case 5:
      return std::min(1.5, std::max(-0.5, x));
    case 6:
      return x / (1 + std::abs(x));
    default:
      return x - std::tanh(x);
  }
}

Tensor spread(DType dtype) {
  Tensor x = mul(random_input({4, 6}, dtype), 3.0).detach();
  x.set_stop_gradient(false);
  return x;
}

TEST(FunctionalExtraTest, ActivationValuesAndGradientsFloat64) {
  for (int kind = 0; kind < 8; ++kind) {
    Tensor x = spread(DType::FLOAT64);
    const std::vector<double> xv = x.to_vector<double>(), yv = apply(kind, x).to_vector<double>();
    for (size_t i = 0; i < xv.size(); ++i) EXPECT_NEAR(yv[i], reference(kind, xv[i]), 1e-12) << kind;
    expect_gradients_match([kind](const Inputs& in) { return apply(kind, in[0]); }, {x});
  }
}

TEST(FunctionalExtraTest, ActivationValuesAndGradientsFloat32) {
  for (int kind = 0; kind < 8; ++kind) {
    Tensor x = spread(DType::FLOAT32);
    const std::vector<double> xv = x.to_vector<double>(), yv = apply(kind, x).to_vector<double>();
    for (size_t i = 0; i < xv.size(); ++i) EXPECT_NEAR(yv[i], reference(kind, xv[i]), 1e-5) << kind;
    expect_gradients_match([kind](const Inputs& in) { return apply(kind, in[0]); }, {x},
                           testing::float32_options());
  }
}

TEST(FunctionalExtraTest, HardtanhRejectsAnEmptyRange) {
  EXPECT_THROW(F::hardtanh(random_input({2}), 1.0, 1.0), std::exception);
}

// <conv2d_transpose(x, W), y> == <x, conv2d(y, W)>: the transpose is conv2d's adjoint.
TEST(FunctionalExtraTest, Conv2dTransposeIsTheAdjointOfConv2d) {
  const F::Pair stride{2, 1}, padding{1, 0}, out_pad{1, 0}, dilation{1, 2};
  const int64_t groups = 2;
  Tensor x = random_input({2, 4, 3, 4}, DType::FLOAT32, 1);
  Tensor w = random_input({4, 3, 3, 2}, DType::FLOAT32, 2);  // [in, out/groups, kh, kw]
  Tensor yt = F::conv2d_transpose(x, w, Tensor(), stride, padding, out_pad, dilation, groups);
  ASSERT_EQ(yt.shape(), (Shape{2, 6, (3 - 1) * 2 - 2 + 2 + 1 + 1, (4 - 1) + 2 * 1 + 1}));
  Tensor y = random_input(yt.shape(), DType::FLOAT32, 3);
  Tensor back = F::conv2d(y, w, Tensor(), stride, padding, dilation, groups);
  ASSERT_EQ(back.shape(), x.shape());
  const double lhs = testing::dot(yt, y), rhs = testing::dot(x, back);
  EXPECT_NEAR(lhs, rhs, 1e-4 * std::max(1.0, std::abs(lhs)));
}

TEST(FunctionalExtraTest, Conv2dTransposeGradients) {
  Tensor x = random_input({2, 2, 3, 3}, DType::FLOAT32, 4);
  Tensor w = random_input({2, 3, 2, 2}, DType::FLOAT32, 5);
  Tensor b = random_input({3}, DType::FLOAT32, 6);
  expect_gradients_match(
      [](const Inputs& in) {
        return F::conv2d_transpose(in[0], in[1], in[2], {2, 2}, {1, 0}, {1, 0});
      },
      {x, w, b}, testing::float32_options());
}

TEST(FunctionalExtraTest, Conv2dTransposeRejectsBadArguments) {
  Tensor x = random_input({1, 2, 3, 3}, DType::FLOAT32);
  Tensor w = random_input({2, 3, 2, 2}, DType::FLOAT32);
  EXPECT_THROW(F::conv2d_transpose(x, w, Tensor(), {1, 1}, {0, 0}, {1, 1}),
               std::exception);  // out_pad >= stride
  EXPECT_THROW(F::conv2d_transpose(random_input({1, 3, 3, 3}, DType::FLOAT32), w, Tensor()), std::exception);
  EXPECT_THROW(F::conv2d_transpose(x, w, random_input({4}, DType::FLOAT32)), std::exception);  // bias size
}

TEST(FunctionalExtraTest, Resample2dNearestRepeatsAndBilinearIsHalfPixel) {
  Tensor x = Tensor::from_vector(std::vector<float>{1, 2, 3, 4}, Shape{1, 1, 2, 2});
  const std::vector<float> near = F::resample2d(x, {4, 4}, false).to_vector<float>();
  const std::vector<float> want{1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4};
  EXPECT_EQ(near, want);
  // Half-pixel bilinear, borders clamped: output row 1 of 4 reads source 0.25.
  const std::vector<float> bil = F::resample2d(x, {4, 1}, true).to_vector<float>();
  // Columns: 1 output of 2 inputs -> source 0.5, the mean of the two columns.
  EXPECT_NEAR(bil[0], 1.5, 1e-6);
  EXPECT_NEAR(bil[1], 0.75 * 1.5 + 0.25 * 3.5, 1e-6);
  EXPECT_NEAR(bil[3], 3.5, 1e-6);
}

TEST(FunctionalExtraTest, Resample2dGradients) {
  Tensor x = random_input({2, 2, 3, 4}, DType::FLOAT32, 8);
  for (bool bilinear : {false, true}) {
    expect_gradients_match(
        [bilinear](const Inputs& in) {
          return F::resample2d(in[0], {6, 8}, bilinear);
        },
        {x}, testing::float32_options());
  }
  expect_gradients_match(
      [](const Inputs& in) {
        return F::resample2d(in[0], {5, 3}, true);
      },
      {x}, testing::float32_options());
}

TEST(FunctionalExtraTest, LocalResponseNormValuesAndGradients) {
  Tensor x = random_input({2, 7, 2, 3}, DType::FLOAT32, 9);
  const double alpha = 0.3, beta = 0.6, k = 1.5;
  const int64_t size = 5;
  const std::vector<double> xv = x.to_vector<double>();
  const std::vector<double> yv = F::local_response_norm(x, size, alpha, beta, k).to_vector<double>();
  const int64_t c = 7, hw = 6;
  for (int64_t n = 0; n < 2; ++n) {
    for (int64_t ch = 0; ch < c; ++ch) {
      for (int64_t i = 0; i < hw; ++i) {
        double sum = 0;
        for (int64_t j = std::max<int64_t>(0, ch - 2); j <= std::min<int64_t>(c - 1, ch + 2); ++j) {
          const double v = xv[(n * c + j) * hw + i];
          sum += v * v;
        }
        const int64_t at = (n * c + ch) * hw + i;
        EXPECT_NEAR(yv[at], xv[at] / std::pow(k + alpha / size * sum, beta), 1e-5);
      }
    }
  }
  expect_gradients_match([](const Inputs& in) { return F::local_response_norm(in[0], 5, 0.3, 0.6, 1.5); },
                         {x}, testing::float32_options());
  EXPECT_THROW(F::local_response_norm(x, 4), std::exception);  // even: not oneDNN's window
}

}  // namespace
}  // namespace crew
