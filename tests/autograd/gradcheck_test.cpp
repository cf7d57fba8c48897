// Finite-difference checks of every differentiable op in crew/autograd/ops.h (float64).
#include "tests/testing/gradcheck.h"

#include <ostream>

#include "crew/autograd/ops.h"

namespace crew {
namespace {

using testing::expect_gradients_match;
using testing::random_input;
using Inputs = std::vector<Tensor>;

struct BinaryCase {
  Shape a, b;
};

void PrintTo(const BinaryCase& c, std::ostream* os) { *os << shape_str(c.a) << "x" << shape_str(c.b); }

class BroadcastGradTest : public ::testing::TestWithParam<BinaryCase> {};

TEST_P(BroadcastGradTest, AddSubMulDiv) {
  const BinaryCase c = GetParam();
  Tensor a = random_input(c.a, DType::FLOAT64, 1);
  Tensor b = random_input(c.b, DType::FLOAT64, 2);
  expect_gradients_match([](const Inputs& in) { return add(in[0], in[1]); }, {a, b});
  expect_gradients_match([](const Inputs& in) { return sub(in[0], in[1]); }, {a, b});
  expect_gradients_match([](const Inputs& in) { return mul(in[0], in[1]); }, {a, b});
  // Keep the divisor away from zero.
  Tensor safe_b = add(mul(b.detach(), 0.5), 2.0).set_stop_gradient(false);
  expect_gradients_match([](const Inputs& in) { return div(in[0], in[1]); }, {a, safe_b});
}

INSTANTIATE_TEST_SUITE_P(Shapes, BroadcastGradTest,
                         ::testing::Values(BinaryCase{{3, 4}, {3, 4}}, BinaryCase{{3, 4}, {}},
                                           BinaryCase{{2, 3, 4}, {4}}, BinaryCase{{2, 3, 2, 2}, {3, 1, 1}},
                                           BinaryCase{{3, 1}, {1, 4}}, BinaryCase{{4}, {2, 3, 4}}));

TEST(GradcheckTest, ScalarAndUnaryOps) {
  Tensor x = random_input({2, 5});
  expect_gradients_match([](const Inputs& in) { return add(in[0], 3.0); }, {x});
  expect_gradients_match([](const Inputs& in) { return mul(in[0], -2.5); }, {x});
  expect_gradients_match([](const Inputs& in) { return neg(in[0]); }, {x});
  expect_gradients_match([](const Inputs& in) { return exp(in[0]); }, {x});
  Tensor pos = add(mul(x.detach(), 0.5), 1.0).set_stop_gradient(false);
  expect_gradients_match([](const Inputs& in) { return log(in[0]); }, {pos});
  expect_gradients_match([](const Inputs& in) { return pow(in[0], 3.0); }, {x});
  expect_gradients_match([](const Inputs& in) { return pow(in[0], 0.5); }, {pos});
}

TEST(GradcheckTest, MatmulAllTransposes) {
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      Tensor a = random_input(ta ? Shape{4, 3} : Shape{3, 4}, DType::FLOAT64, 3);
      Tensor b = random_input(tb ? Shape{5, 4} : Shape{4, 5}, DType::FLOAT64, 4);
      expect_gradients_match([ta, tb](const Inputs& in) { return matmul(in[0], in[1], ta, tb); }, {a, b});
    }
  }
}

TEST(GradcheckTest, BatchedMatmulWithBroadcastBatch) {
  Tensor a = random_input({2, 3, 4}, DType::FLOAT64, 5);
  Tensor b = random_input({1, 4, 2}, DType::FLOAT64, 6);
  expect_gradients_match([](const Inputs& in) { return matmul(in[0], in[1]); }, {a, b});
  expect_gradients_match([](const Inputs& in) { return matmul(in[0], in[1], false, true); },
                         {a, random_input({2, 5, 4}, DType::FLOAT64, 7)});
}

TEST(GradcheckTest, ShapeOps) {
  Tensor x = random_input({2, 3, 4});
  expect_gradients_match([](const Inputs& in) { return reshape(in[0], {4, -1}); }, {x});
  expect_gradients_match([](const Inputs& in) { return unsqueeze(in[0], 1); }, {x});
  expect_gradients_match([](const Inputs& in) { return squeeze(unsqueeze(in[0], -1), -1); }, {x});
  expect_gradients_match([](const Inputs& in) { return transpose2d(in[0]); }, {random_input({3, 5})});
}

TEST(GradcheckTest, Reductions) {
  Tensor x = random_input({2, 3, 4});
  expect_gradients_match([](const Inputs& in) { return sum(in[0]); }, {x});
  expect_gradients_match([](const Inputs& in) { return mean(in[0]); }, {x});
  for (int64_t axis : {0, 1, 2, -1}) {
    for (bool keep : {false, true}) {
      expect_gradients_match([axis, keep](const Inputs& in) { return sum(in[0], axis, keep); }, {x});
      expect_gradients_match([axis, keep](const Inputs& in) { return mean(in[0], axis, keep); }, {x});
    }
  }
}

TEST(GradcheckTest, ConcatAlongEachAxis) {
  Tensor a = random_input({2, 3}, DType::FLOAT64, 8);
  Tensor b = random_input({2, 3}, DType::FLOAT64, 9);
  expect_gradients_match([](const Inputs& in) { return concat({in[0], in[1]}, 0); }, {a, b});
  expect_gradients_match([](const Inputs& in) { return concat({in[0], in[1]}, 1); }, {a, random_input({2, 1})});
}

TEST(GradcheckTest, CompositeExpressionReusingAnInput) {
  // x is used three times: contributions must add up.
  Tensor x = random_input({3, 3});
  Tensor w = random_input({3, 2}, DType::FLOAT64, 11);
  expect_gradients_match(
      [](const Inputs& in) { return mul(matmul(mul(in[0], in[0]), in[1]), reshape(sum(in[0], 0, false), {3, 1})); },
      {x, w});
}

TEST(OpsTest, ForwardValues) {
  Tensor a = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor b = Tensor::from_vector<float>({10, 20, 30}, {3});
  EXPECT_EQ(add(a, b).to_vector<float>(), (std::vector<float>{11, 22, 33, 14, 25, 36}));
  EXPECT_EQ(sum(a, 0).to_vector<float>(), (std::vector<float>{5, 7, 9}));
  EXPECT_EQ(mean(a, 1, true).shape(), (Shape{2, 1}));
  EXPECT_EQ(mean(a, 1).to_vector<float>(), (std::vector<float>{2, 5}));
  EXPECT_EQ(matmul(a, a, false, true).to_vector<float>(), (std::vector<float>{14, 32, 32, 77}));
  EXPECT_EQ(transpose2d(a).to_vector<float>(), (std::vector<float>{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(concat({a, a}, 1).shape(), (Shape{2, 6}));
  EXPECT_EQ(argmax(Tensor::from_vector<float>({1, 9, 3, 7, 2, 8}, {2, 3})).to_vector<int64_t>(),
            (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(argmax(a, 0).to_vector<int64_t>(), (std::vector<int64_t>{1, 1, 1}));
}

TEST(OpsTest, ErrorsNameTheShapes) {
  Tensor a = Tensor::zeros({2, 3});
  EXPECT_THROW(add(a, Tensor::zeros({4})), ValueError);
  EXPECT_THROW(matmul(a, Tensor::zeros({2, 3})), ValueError);
  EXPECT_THROW(squeeze(a, 0), ValueError);
  EXPECT_THROW(add(a, Tensor::zeros({2, 3}, DType::FLOAT64)), ValueError);
  try {
    add(a, Tensor::zeros({4}));
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("[2, 3]"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace crew
