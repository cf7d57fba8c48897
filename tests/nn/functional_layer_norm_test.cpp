// layer_norm: values against a loop reference (float32 on oneDNN, float64), gradients, errors.
#include <cmath>

#include "crew/autograd/ops_cast.h"
#include "tests/nn/functional_test_util.h"

namespace crew {
namespace {

using namespace nn::functional_testing;

// Row-wise reference over the last `cols` elements.
std::vector<double> reference(const Tensor& x, int64_t cols, const Tensor& w, const Tensor& b, double eps) {
  const auto xv = x.to_vector<double>();
  const std::vector<double> wv = w.defined() ? w.to_vector<double>() : std::vector<double>(cols, 1.0);
  const std::vector<double> bv = b.defined() ? b.to_vector<double>() : std::vector<double>(cols, 0.0);
  std::vector<double> y(xv.size());
  for (size_t r = 0; r < xv.size() / cols; ++r) {
    double m = 0, v = 0;
    for (int64_t c = 0; c < cols; ++c) m += xv[r * cols + c] / cols;
    for (int64_t c = 0; c < cols; ++c) v += (xv[r * cols + c] - m) * (xv[r * cols + c] - m) / cols;
    for (int64_t c = 0; c < cols; ++c)
      y[r * cols + c] = (xv[r * cols + c] - m) / std::sqrt(v + eps) * wv[c] + bv[c];
  }
  return y;
}

TEST(FunctionalLayerNormTest, MatchesReference) {
  Generator gen(5);
  for (DType dt : {DType::FLOAT32, DType::FLOAT64}) {
    Tensor x = uniform({2, 3, 8}, -2, 2, dt, &gen);
    Tensor w = uniform({8}, 0.5, 1.5, dt, &gen), b = uniform({8}, -1, 1, dt, &gen);
    for (bool affine : {true, false}) {
      Tensor wa = affine ? w : Tensor(), ba = affine ? b : Tensor();
      const auto got = F::layer_norm(x, {8}, wa, ba).to_vector<double>();
      const auto want = reference(x, 8, wa, ba, 1e-5);
      for (size_t i = 0; i < got.size(); ++i)
        ASSERT_NEAR(got[i], want[i], 1e-4) << dtype_name(dt) << " " << i;
    }
    // Two trailing axes normalise as one row of 24.
    Tensor w2 = uniform({3, 8}, 0.5, 1.5, dt, &gen);
    const auto got = F::layer_norm(x, {3, 8}, w2, Tensor(), 1e-3).to_vector<double>();
    const auto want = reference(x, 24, w2.view({24}), Tensor(), 1e-3);
    for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-4) << i;
  }
}

TEST(FunctionalLayerNormTest, GradientsFloat64) {
  Tensor x = random_input({3, 5});
  Tensor w = random_input({5}, DType::FLOAT64, 8), b = random_input({5}, DType::FLOAT64, 9);
  expect_gradients_match([](const Inputs& in) { return F::layer_norm(in[0], {5}, in[1], in[2]); }, {x, w, b});
  expect_gradients_match([](const Inputs& in) { return F::layer_norm(in[0], {5}, Tensor(), Tensor()); }, {x});
  expect_gradients_match(
      [](const Inputs& in) {
        return F::layer_norm(in[0], {2, 3}, in[1], Tensor());
      },
      {random_input({2, 2, 3}), random_input({2, 3}, DType::FLOAT64, 4)});
}

TEST(FunctionalLayerNormTest, GradientsFloat32OnOneDnn) {
  Tensor x = random_input({4, 6}, DType::FLOAT32, 3);
  Tensor w = random_input({6}, DType::FLOAT32, 8), b = random_input({6}, DType::FLOAT32, 9);
  auto opt = crew::testing::float32_options();
  expect_gradients_match([](const Inputs& in) { return F::layer_norm(in[0], {6}, in[1], in[2]); }, {x, w, b},
                         opt);
  expect_gradients_match([](const Inputs& in) { return F::layer_norm(in[0], {6}, Tensor(), in[1]); }, {x, b},
                         opt);
}

// bfloat16 x with float32 gamma/beta: bfloat16 output and input gradient, float32 parameter
// gradients, within bfloat16's rounding of the float32 kernel on the same (rounded) values.
// On CPUs without bf16 primitives the same holds through the via-float32 path.
TEST(FunctionalLayerNormTest, Bfloat16MatchesFloat32) {
  Generator gen(7);
  const Tensor x16 = uniform({6, 40}, -2, 2, DType::FLOAT32, &gen).to(DType::BFLOAT16);
  const Tensor w = uniform({40}, 0.5, 1.5, DType::FLOAT32, &gen), b = uniform({40}, -1, 1, DType::FLOAT32, &gen);
  const Tensor up = uniform({6, 40}, -1, 1, DType::FLOAT32, &gen);  // d loss / d y
  auto run = [&](const Tensor& x) {
    Tensor xl = x.clone().set_stop_gradient(false);
    Tensor wl = w.clone().set_stop_gradient(false), bl = b.clone().set_stop_gradient(false);
    Tensor y = F::layer_norm(xl, {40}, wl, bl);
    sum(mul(cast(y, DType::FLOAT32), up)).backward();
    return std::vector<Tensor>{y, xl.grad(), wl.grad(), bl.grad()};
  };
  const auto got = run(x16), want = run(x16.to(DType::FLOAT32));
  EXPECT_EQ(got[0].dtype(), DType::BFLOAT16);
  EXPECT_EQ(got[1].dtype(), DType::BFLOAT16);
  EXPECT_EQ(got[2].dtype(), DType::FLOAT32);
  EXPECT_EQ(got[3].dtype(), DType::FLOAT32);
  const char* names[] = {"y", "grad x", "grad weight", "grad bias"};
  for (size_t k = 0; k < got.size(); ++k) {
    const auto g = got[k].to(DType::FLOAT32).to_vector<float>(), r = want[k].to_vector<float>();
    for (size_t i = 0; i < g.size(); ++i)
      ASSERT_NEAR(g[i], r[i], 2e-2 * (1 + std::abs(r[i]))) << names[k] << " " << i;
  }
  // gamma/beta of x's 16-bit dtype are refused: they must be float32.
  EXPECT_THROW(F::layer_norm(x16, {40}, w.to(DType::BFLOAT16), Tensor()), ValueError);
  EXPECT_EQ(F::layer_norm(x16, {40}, Tensor(), Tensor()).dtype(), DType::BFLOAT16);
}

TEST(FunctionalLayerNormTest, RejectsBadShapes) {
  Tensor x = Tensor::zeros({2, 4});
  EXPECT_THROW(F::layer_norm(x, {3}, Tensor(), Tensor()), ValueError);
  EXPECT_THROW(F::layer_norm(x, {2, 2, 4}, Tensor(), Tensor()), ValueError);
  EXPECT_THROW(F::layer_norm(x, {4}, Tensor::ones({3}), Tensor()), ValueError);
  EXPECT_THROW(F::layer_norm(x, {4}, Tensor(), Tensor::ones({4}, DType::FLOAT64)), ValueError);
  try {
    F::layer_norm(x, {3}, Tensor(), Tensor());
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("[2, 4]"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace crew
