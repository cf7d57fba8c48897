// permute, transpose, slice, split: values against index arithmetic, gradients, errors.
#include <gtest/gtest.h>

#include "crew/autograd/ops.h"
#include "tests/testing/gradcheck.h"

namespace crew {
namespace {

using testing::expect_gradients_match;
using testing::random_input;
using Inputs = std::vector<Tensor>;

TEST(PermuteTest, MatchesIndexArithmetic) {
  const Shape s{2, 3, 4, 5};
  Tensor x = Tensor::arange(shape_numel(s), DType::FLOAT32).view(s);
  Tensor y = permute(x, {0, 2, 1, 3});  // [B, T, H, D] -> [B, H, T, D]
  ASSERT_EQ(y.shape(), (Shape{2, 4, 3, 5}));
  const auto xv = x.to_vector<float>(), yv = y.to_vector<float>();
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t h = 0; h < 4; ++h)
      for (int64_t t = 0; t < 3; ++t)
        for (int64_t d = 0; d < 5; ++d)
          ASSERT_EQ(yv[((b * 4 + h) * 3 + t) * 5 + d], xv[((b * 3 + t) * 4 + h) * 5 + d]);
  Tensor z = permute(x, {3, 0, 2, 1});
  ASSERT_EQ(z.shape(), (Shape{5, 2, 4, 3}));
  const auto zv = z.to_vector<float>();
  for (int64_t d = 0; d < 5; ++d)
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t h = 0; h < 4; ++h)
        for (int64_t t = 0; t < 3; ++t)
          ASSERT_EQ(zv[((d * 2 + b) * 4 + h) * 3 + t], xv[((b * 3 + t) * 4 + h) * 5 + d]);
  EXPECT_EQ(permute(Tensor::arange(6).view({2, 3}), {1, 0}).to_vector<int64_t>(),
            (std::vector<int64_t>{0, 3, 1, 4, 2, 5}));
}

TEST(PermuteTest, TransposeSwapsTwoAxes) {
  Tensor x = Tensor::arange(24, DType::FLOAT64).view({2, 3, 4});
  Tensor y = transpose(x, -1, 0);
  ASSERT_EQ(y.shape(), (Shape{4, 3, 2}));
  EXPECT_EQ(y.to_vector<double>()[1], 12.0);  // y[0, 0, 1] = x[1, 0, 0]
  EXPECT_EQ(transpose(x, 1, 2).to_vector<double>(), permute(x, {0, 2, 1}).to_vector<double>());
}

TEST(PermuteTest, Gradients) {
  Tensor x = random_input({2, 3, 4});
  expect_gradients_match([](const Inputs& in) { return permute(in[0], {2, 0, 1}); }, {x});
  expect_gradients_match([](const Inputs& in) { return transpose(in[0], 0, 2); }, {x});
}

TEST(PermuteTest, RejectsBadPerms) {
  Tensor x = Tensor::zeros({2, 3});
  EXPECT_THROW(permute(x, {0}), ValueError);
  EXPECT_THROW(permute(x, {0, 0}), ValueError);
  EXPECT_THROW(permute(x, {0, 2}), IndexError);
  EXPECT_THROW(transpose(x, 0, 5), IndexError);
}

TEST(SliceTest, MatchesIndexArithmetic) {
  Tensor x = Tensor::arange(24, DType::FLOAT32).view({2, 3, 4});
  Tensor y = slice(x, 1, 1, 3);
  ASSERT_EQ(y.shape(), (Shape{2, 2, 4}));
  const auto xv = x.to_vector<float>(), yv = y.to_vector<float>();
  for (int64_t a = 0; a < 2; ++a)
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t c = 0; c < 4; ++c) ASSERT_EQ(yv[(a * 2 + b) * 4 + c], xv[(a * 3 + b + 1) * 4 + c]);
  EXPECT_EQ(slice(x, -1, -2, 100).shape(), (Shape{2, 3, 2}));  // negative start, clamped stop
  EXPECT_EQ(slice(x, 0, 1, 1).shape(), (Shape{0, 3, 4}));
  EXPECT_EQ(slice(x, 2, 3, 1).shape(), (Shape{2, 3, 0}));
  EXPECT_THROW(slice(x, 3, 0, 1), IndexError);
}

TEST(SliceTest, GradientScattersBack) {
  Tensor x = random_input({3, 4, 2});
  expect_gradients_match([](const Inputs& in) { return slice(in[0], 1, 1, 3); }, {x});
  expect_gradients_match([](const Inputs& in) { return slice(in[0], 0, 2, 3); }, {x});
}

TEST(SplitTest, EqualSectionsAndGradients) {
  Tensor x = Tensor::arange(12, DType::FLOAT32).view({2, 6});
  std::vector<Tensor> parts = split(x, 3, 1);
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[1].shape(), (Shape{2, 2}));
  EXPECT_EQ(parts[1].to_vector<float>(), (std::vector<float>{2, 3, 8, 9}));
  EXPECT_EQ(concat(parts, 1).to_vector<float>(), x.to_vector<float>());
  Tensor qkv = random_input({2, 3, 6});
  expect_gradients_match(
      [](const Inputs& in) {
        std::vector<Tensor> p = split(in[0], 3, -1);  // q, k, v of a fused projection
        return add(mul(p[0], p[1]), p[2]);
      },
      {qkv});
  EXPECT_THROW(split(x, 4, 1), ValueError);
  EXPECT_THROW(split(x, 0, 1), ValueError);
  try {
    split(x, 4, 1);
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("[2, 6]"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace crew
