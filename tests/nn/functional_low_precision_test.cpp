// Autograd through the 16-bit kernels: a bfloat16 / float16 graph gives gradients of its own
// dtype, close to the float32 graph's on the same values; mixing dtypes in one op is a
// DTypeError naming the op.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "crew/autograd/ops.h"
#include "crew/autograd/ops_cast.h"
#include "crew/nn/functional.h"
#include "crew/tensor/random.h"
#include "tests/testing/low_precision.h"

namespace crew {

// Test names and failure messages show "bfloat16", not the enum's byte.
void PrintTo(DType dtype, std::ostream* os) { *os << dtype_name(dtype); }

namespace {

namespace F = nn::functional;

void expect_close(const Tensor& got, const Tensor& want, DType dtype, const std::string& what) {
  testing::expect_close_to_float32(got, want, dtype, dtype == DType::BFLOAT16 ? 2e-2 : 4e-3, what);
}

// A leaf of `dtype` and its float32 twin holding the same values, both requiring grad.
std::pair<Tensor, Tensor> leaves(const Shape& shape, DType dtype, Generator* gen) {
  return testing::low_precision_leaves(shape, dtype, gen);
}

class LowPrecisionGrad : public ::testing::TestWithParam<DType> {};

TEST_P(LowPrecisionGrad, ConvReluLinearMatmulGradientsKeepTheDtype) {
  const DType dt = GetParam();
  Generator gen(21);
  auto [x, x32] = leaves({2, 3, 6, 6}, dt, &gen);
  auto [cw, cw32] = leaves({8, 3, 3, 3}, dt, &gen);
  auto [cb, cb32] = leaves({8}, dt, &gen);
  auto [lw, lw32] = leaves({8 * 4 * 4, 10}, dt, &gen);
  auto [lb, lb32] = leaves({10}, dt, &gen);
  auto [m, m32] = leaves({10, 5}, dt, &gen);
  auto net = [](const Tensor& x, const Tensor& cw, const Tensor& cb, const Tensor& lw, const Tensor& lb,
                const Tensor& m) {
    Tensor h = F::relu(F::conv2d(x, cw, cb));
    h = F::linear(F::flatten(h, 1, -1), lw, lb);
    return F::softmax(matmul(F::gelu(h, true), m), -1);
  };
  const Tensor y = net(x, cw, cb, lw, lb, m);
  const Tensor y32 = net(x32, cw32, cb32, lw32, lb32, m32);
  expect_close(y, y32, dt, "output");
  const Tensor g32 = uniform(y32.shape(), -1, 1, DType::FLOAT32, &gen);
  y.backward(g32.to(dt));
  y32.backward(g32.to(dt).to(DType::FLOAT32));
  const std::pair<Tensor, Tensor> pairs[] = {{x, x32},   {cw, cw32}, {cb, cb32},
                                             {lw, lw32}, {lb, lb32}, {m, m32}};
  for (size_t i = 0; i < std::size(pairs); ++i) {
    expect_close(pairs[i].first.grad(), pairs[i].second.grad(), dt, "gradient " + std::to_string(i));
  }
}

TEST_P(LowPrecisionGrad, GradientsAccumulateInTheirDtype) {
  const DType dt = GetParam();
  Tensor w = Tensor::ones({3, 2}, dt);
  w.set_stop_gradient(false);
  const Tensor x = Tensor::ones({4, 3}, dt);
  for (int step = 0; step < 2; ++step) F::linear(x, w, Tensor()).backward(Tensor::ones({4, 2}, dt));
  EXPECT_EQ(w.grad().dtype(), dt);
  EXPECT_EQ(w.grad().to_vector<double>(), std::vector<double>(6, 8.0));
}

TEST_P(LowPrecisionGrad, MixedDtypesAreADTypeErrorNamingTheOp) {
  const DType dt = GetParam();
  const Tensor x = Tensor::ones({2, 3}), w = Tensor::ones({3, 4}, dt);
  try {
    F::linear(x, w, Tensor());
    FAIL() << "expected DTypeError";
  } catch (const DTypeError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("linear"), std::string::npos) << what;
    EXPECT_NE(what.find(dtype_name(dt)), std::string::npos) << what;
    EXPECT_NE(what.find("float32"), std::string::npos) << what;
  }
  EXPECT_THROW(add(x, Tensor::ones({2, 3}, dt)), DTypeError);
}

TEST_P(LowPrecisionGrad, CastIsDifferentiableBackToTheInputDtype) {
  const DType dt = GetParam();
  Generator gen(22);
  auto [w16, w32] = leaves({6, 4}, dt, &gen);
  Tensor master = w32.detach().clone();  // a float32 master weight feeding a 16-bit op
  master.set_stop_gradient(false);
  const Tensor x = uniform({5, 6}, -1, 1, DType::FLOAT32, &gen).to(dt);
  const Tensor g = uniform({5, 4}, -1, 1, DType::FLOAT32, &gen).to(dt);
  const Tensor cast_w = cast(master, dt);
  EXPECT_EQ(cast_w.dtype(), dt);
  F::linear(x, cast_w, Tensor()).backward(g);
  F::linear(x.to(DType::FLOAT32), w32, Tensor()).backward(g.to(DType::FLOAT32));
  ASSERT_EQ(master.grad().dtype(), DType::FLOAT32);
  expect_close(master.grad().to(dt), w32.grad(), dt, "master gradient");
  EXPECT_FALSE(cast(Tensor::arange(3), DType::FLOAT32).requires_grad());
}

// adaptive_avg_pool2d keeps a 16-bit input's dtype (summed in float32): overlapping bins
// (7 -> 3), a global pool (1x1) and their gradients, against float32.
TEST_P(LowPrecisionGrad, AdaptiveAvgPoolKeepsTheDtype) {
  const DType dt = GetParam();
  Generator gen(23);
  for (int64_t out : {3, 1}) {
    auto [x, x32] = leaves({2, 3, 7, 7}, dt, &gen);
    const Tensor y = F::adaptive_avg_pool2d(x, {out, out});
    const Tensor y32 = F::adaptive_avg_pool2d(x32, {out, out});
    expect_close(y, y32, dt, "output " + std::to_string(out));
    const Tensor g = uniform(y32.shape(), -1, 1, DType::FLOAT32, &gen).to(dt);
    y.backward(g);
    y32.backward(g.to(DType::FLOAT32));
    expect_close(x.grad(), x32.grad(), dt, "gradient " + std::to_string(out));
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, LowPrecisionGrad, ::testing::Values(DType::BFLOAT16, DType::FLOAT16),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

}  // namespace
}  // namespace crew
