// The ops of crew/autograd/ops_math.h and indexing.h: values against hand-computed results
// and finite-difference gradient checks (float64) for every op with a gradient.
#include <cmath>
#include <limits>

#include "crew/autograd/indexing.h"
#include "crew/autograd/ops.h"
#include "crew/autograd/ops_math.h"
#include "tests/testing/gradcheck.h"
#include "tests/testing/tensor_expect.h"

namespace crew {
namespace {

using testing::expect_gradients_match;
using testing::expect_near;
using testing::random_input;
using Inputs = std::vector<Tensor>;
using I = TensorIndex;

Tensor f64(const std::vector<double>& v, const Shape& s) { return Tensor::from_vector(v, s); }
Tensor i64(const std::vector<int64_t>& v, const Shape& s) { return Tensor::from_vector(v, s); }
Tensor positive(const Shape& s) {
  return add(mul(random_input(s).detach(), 0.4), 1.0).set_stop_gradient(false);
}

TEST(MathOpsTest, PointwiseValues) {
  Tensor x = f64({-1.5, 0.0, 2.0}, {3});
  expect_near(abs(x), {1.5, 0, 2});
  expect_near(square(x), {2.25, 0, 4});
  expect_near(clip(x, -1, 1), {-1, 0, 1});
  expect_near(sign(x), {-1, 0, 1});
  expect_near(sigmoid(x), {1 / (1 + std::exp(1.5)), 0.5, 1 / (1 + std::exp(-2.0))});
  expect_near(erf(x), {std::erf(-1.5), 0, std::erf(2.0)});
  expect_near(abs(i64({-3, 4}, {2})), {3, 4});
  EXPECT_EQ(abs(i64({-3, 4}, {2})).dtype(), DType::INT64);
  EXPECT_THROW(sqrt(i64({4}, {1})), ValueError);
  EXPECT_THROW(abs(Tensor::zeros({2}, DType::BOOL)), ValueError);
}

TEST(MathOpsTest, PointwiseGradients) {
  Tensor x = random_input({2, 3});
  for (auto fn : {&abs, &square, &sin, &cos, &tanh, &sigmoid, &erf}) {
    expect_gradients_match([fn](const Inputs& in) { return fn(in[0]); }, {x});
  }
  Tensor p = positive({2, 3});
  expect_gradients_match([](const Inputs& in) { return sqrt(in[0]); }, {p});
  expect_gradients_match([](const Inputs& in) { return rsqrt(in[0]); }, {p});
  expect_gradients_match([](const Inputs& in) { return clip(in[0], -0.5, 0.5); }, {x});
  expect_gradients_match([](const Inputs& in) { return cast(cast(in[0], DType::FLOAT32), DType::FLOAT64); },
                         {x}, testing::float32_options());
}

TEST(MathOpsTest, RoundingAndLogarithms) {
  Tensor x = f64({-2.5, -0.4, 0.5, 1.5, 2.2}, {5});
  expect_near(ceil(x), {-2, -0.0, 1, 2, 3});
  expect_near(round(x), {-3, -0.0, 1, 2, 2});  // half away from zero, as Paddle
  Tensor p = f64({0.5, 1, 8, 100}, {4});
  expect_near(log2(p), {-1, 0, 3, std::log2(100.0)});
  expect_near(log10(p), {std::log10(0.5), 0, std::log10(8.0), 2});
  expect_near(log1p(f64({1e-10, 1}, {2})), {std::log1p(1e-10), std::log(2.0)});
  expect_near(tan(f64({0, 0.5}, {2})), {0, std::tan(0.5)});
  EXPECT_THROW(ceil(i64({1}, {1})), ValueError);
}

TEST(MathOpsTest, RoundingAndLogarithmGradients) {
  Tensor x = random_input({2, 3});
  expect_gradients_match([](const Inputs& in) { return tan(in[0]); }, {x});
  Tensor p = positive({2, 3});
  for (auto fn : {&log2, &log10, &log1p}) {
    expect_gradients_match([fn](const Inputs& in) { return fn(in[0]); }, {p});
  }
  for (auto fn : {&ceil, &round}) {
    Tensor v = x.detach().set_stop_gradient(false);
    sum(fn(v)).backward();
    expect_near(v.grad(), std::vector<double>(6, 0.0));
  }
}

TEST(MathOpsTest, InverseAndHyperbolicTrigonometryAndExpm1) {
  Tensor x = f64({-0.9, -0.25, 0, 0.5}, {4});
  const std::vector<double> v = {-0.9, -0.25, 0, 0.5};
  const auto each = [&v](double (*f)(double)) {
    std::vector<double> out;
    for (double e : v) out.push_back(f(e));
    return out;
  };
  expect_near(asin(x), each(std::asin));
  expect_near(acos(x), each(std::acos));
  expect_near(atan(x), each(std::atan));
  expect_near(sinh(x), each(std::sinh));
  expect_near(cosh(x), each(std::cosh));
  expect_near(asinh(x), each(std::asinh));
  expect_near(atanh(x), each(std::atanh));
  expect_near(acosh(f64({1, 2, 10}, {3})), {0, std::acosh(2.0), std::acosh(10.0)});
  expect_near(expm1(f64({1e-12, 1}, {2})), {std::expm1(1e-12), std::expm1(1.0)});
  expect_near(trunc(f64({-2.7, -0.5, 0.5, 2.7}, {4})), {-2, -0.0, 0, 2});
  EXPECT_TRUE(std::isnan(asin(f64({2}, {1})).to_vector<double>()[0]));  // outside the domain: NaN, as Paddle
  EXPECT_THROW(asin(i64({1}, {1})), ValueError);
}

TEST(MathOpsTest, InverseAndHyperbolicTrigonometryGradients) {
  Tensor x = mul(random_input({2, 3}).detach(), 0.8).set_stop_gradient(false);  // |x| < 1 for asin ... atanh
  for (auto fn : {&asin, &acos, &atan, &sinh, &cosh, &asinh, &atanh, &expm1}) {
    expect_gradients_match([fn](const Inputs& in) { return fn(in[0]); }, {x});
  }
  Tensor above_one = add(positive({2, 3}).detach(), 1.0).set_stop_gradient(false);
  expect_gradients_match([](const Inputs& in) { return acosh(in[0]); }, {above_one});
  Tensor v = x.detach().set_stop_gradient(false);
  sum(trunc(v)).backward();
  expect_near(v.grad(), std::vector<double>(6, 0.0));
}

TEST(MathOpsTest, CumprodValuesAndGradients) {
  expect_near(cumprod(f64({1, 2, 3, 4, 5, 6}, {2, 3}), 1), {1, 2, 6, 4, 20, 120});
  expect_near(cumprod(f64({1, 2, 3, 4}, {2, 2}), -2), {1, 2, 3, 8});
  expect_near(cumprod(i64({2, 3, 4}, {3}), 0), {2, 6, 24});
  Tensor x = random_input({3, 4});
  expect_gradients_match([](const Inputs& in) { return cumprod(in[0], 1); }, {x});
  expect_gradients_match([](const Inputs& in) { return cumprod(in[0], 0); }, {x});
  // Zeros in the line (one and two): the exact gradient, checked against finite differences.
  Tensor z = f64({2, 0, 3, -1, 0.5, 0, 4, 2}, {2, 4}).set_stop_gradient(false);
  expect_gradients_match([](const Inputs& in) { return cumprod(in[0], 1); }, {z});
  Tensor y = f64({2, 0, 3}, {3}).set_stop_gradient(false);
  sum(cumprod(y, 0)).backward();
  expect_near(y.grad(), {1, 2 + 6, 0});
}

TEST(MathOpsTest, MasksAreBoolAndBroadcast) {
  Tensor a = f64({1, 2, 3, 4}, {2, 2});
  Tensor b = f64({2, 2}, {2});
  Tensor lt = less_than(a, b);
  EXPECT_EQ(lt.dtype(), DType::BOOL);
  expect_near(lt, {1, 0, 0, 0});
  expect_near(greater_equal(a, b), {0, 1, 1, 1});
  expect_near(logical_xor(lt, equal(a, b)), {1, 1, 0, 0});
  expect_near(logical_not(lt), {0, 1, 1, 1});
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  Tensor odd = f64({1, inf, nan}, {3});
  expect_near(isnan(odd), {0, 0, 1});
  expect_near(isinf(odd), {0, 1, 0});
  expect_near(isfinite(odd), {1, 0, 0});
  EXPECT_TRUE(allclose(a, add(a, 1e-9)));
  EXPECT_FALSE(allclose(a, add(a, 1e-3)));
  EXPECT_TRUE(equal_all(a, a.clone()));
  EXPECT_FALSE(equal_all(a, b));
  // int compared with float converts to float.
  expect_near(equal(i64({1, 2}, {2}), f64({1.0, 2.5}, {2})), {1, 0});
}

TEST(MathOpsTest, WhereAndMaskedSelect) {
  Tensor c = greater_than(f64({1, -1, 2}, {3}), Tensor::scalar(0.0, DType::FLOAT64));
  Tensor x = random_input({3}), y = random_input({2, 3}, DType::FLOAT64, 9);
  Tensor w = where(c, x, y);
  EXPECT_EQ(w.shape(), (Shape{2, 3}));
  expect_gradients_match([c](const Inputs& in) { return where(c, in[0], in[1]); }, {x, y});
  Tensor s = masked_select(f64({1, -1, 2}, {3}), c);
  expect_near(s, {1, 2});
  expect_gradients_match([c](const Inputs& in) { return masked_select(in[0], c); }, {x});
  EXPECT_THROW(masked_select(x, f64({1, 0, 1}, {3})), ValueError);
}

TEST(MathOpsTest, SelectionGradients) {
  Tensor x = random_input({4, 3});
  Tensor idx = i64({3, 0, 3}, {3});
  expect_near(index_select(f64({0, 1, 2, 3}, {4}), idx, 0), {3, 0, 3});
  expect_gradients_match([idx](const Inputs& in) { return index_select(in[0], idx, 0); }, {x});
  expect_gradients_match([](const Inputs& in) { return index_select(in[0], i64({2, -1}, {2}), 1); }, {x});
  Tensor nd = i64({1, 2, 3, 0}, {2, 2});
  expect_near(gather_nd(f64({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {4, 3}), nd), {5, 9});
  expect_gradients_match([nd](const Inputs& in) { return gather_nd(in[0], nd); }, {x});
  Tensor upd = random_input({2, 3}, DType::FLOAT64, 5);
  for (bool overwrite : {true, false}) {
    expect_gradients_match(
        [overwrite](const Inputs& in) {
          return scatter(in[0], i64({1, 3}, {2}), in[1], overwrite);
        },
        {x, upd});
  }
  Tensor sc = scatter(f64({1, 1, 2, 2, 3, 3}, {3, 2}), i64({2, 1, 0, 1}, {4}),
                      f64({1, 1, 2, 2, 3, 3, 4, 4}, {4, 2}), false);
  expect_near(sc, {3, 3, 6, 6, 1, 1});  // Paddle's scatter example, overwrite=False
  EXPECT_THROW(index_select(x, i64({4}, {1}), 0), IndexError);
  expect_gradients_match([](const Inputs& in) { return expand(in[0], {2, 4, 3}); }, {x});
  expect_gradients_match([](const Inputs& in) { return tile(in[0], {2, 1, 2}); }, {x});
  expect_near(tile(f64({1, 2}, {2}), {2}), {1, 2, 1, 2});
  expect_near(flip(f64({1, 2, 3, 4}, {2, 2}), {0, 1}), {4, 3, 2, 1});
  expect_near(roll(f64({1, 2, 3, 4, 5, 6}, {2, 3}), {1}, {}), {6, 1, 2, 3, 4, 5});
  expect_near(roll(f64({1, 2, 3, 4, 5, 6}, {2, 3}), {1}, {1}), {3, 1, 2, 6, 4, 5});
  expect_gradients_match([](const Inputs& in) { return roll(flip(in[0], {1}), {-1, 2}, {0, 1}); }, {x});
  EXPECT_EQ(unbind(x, 1).size(), 3u);
}

TEST(MathOpsTest, OrderingAndReductions) {
  Tensor v = f64({1, 4, 5, 7, 2, 3}, {2, 3});
  auto top = topk(v, 1, 1);
  expect_near(top.values, {5, 7});
  expect_near(top.indices, {2, 0});
  auto sorted = sort(v, 0, true);
  expect_near(sorted.values, {7, 4, 5, 1, 2, 3});
  Tensor x = random_input({3, 4});
  expect_gradients_match([](const Inputs& in) { return topk(in[0], 2, 1).values; }, {x});
  expect_gradients_match([](const Inputs& in) { return sort(in[0], 0).values; }, {x});
  expect_near(cumsum(f64({1, 2, 3, 4}, {2, 2}), 1), {1, 3, 3, 7});
  expect_gradients_match([](const Inputs& in) { return cumsum(in[0], 0); }, {x});
  expect_near(prod(v, {1}), {20, 42});
  expect_near(prod(f64({0, 2, 3}, {3}), {}), {0});
  expect_gradients_match([](const Inputs& in) { return prod(in[0], {0}, true); }, {x});
  // A zero in the line: the exact gradient, not 0/0.
  Tensor z = f64({0, 2, 3}, {3}).set_stop_gradient(false);
  prod(z, {}).backward();
  expect_near(z.grad(), {6, 0, 0});
  expect_near(amax(v, {}), {7});
  expect_near(amin(v, {0}), {1, 2, 3});
  expect_gradients_match([](const Inputs& in) { return amax(in[0], {0, 1}, true); }, {x});
  expect_near(var(f64({1, 2, 3, 4}, {4}), {}), {5.0 / 3});
  expect_near(stddev(f64({1, 2, 3, 4}, {4}), {}, false), {std::sqrt(1.25)});
  expect_gradients_match([](const Inputs& in) { return var(in[0], {1}); }, {x});
  expect_gradients_match([](const Inputs& in) { return stddev(in[0], {}, false, true); }, {x});
  expect_near(norm(f64({3, -4}, {2}), 2, {}), {5});
  expect_near(norm(f64({3, -4}, {2}), 1, {}), {7});
  expect_near(norm(f64({3, -4}, {2}), std::numeric_limits<double>::infinity(), {}), {4});
  for (double p : {1.0, 2.0, 3.0}) {
    expect_gradients_match([p](const Inputs& in) { return norm(in[0], p, {1}); }, {x});
  }
}

TEST(IndexingTest, StepsNoneEllipsisAndTensors) {
  Tensor x = Tensor::arange(24, DType::FLOAT64).view({2, 3, 4});
  Tensor y = index(x, {I::integer(1), I::slice({}, {}, 2), I::slice({}, {}, -1)});
  EXPECT_EQ(y.shape(), (Shape{2, 4}));
  expect_near(y, {15, 14, 13, 12, 23, 22, 21, 20});
  EXPECT_EQ(index(x, {I::none(), I::ellipsis(), I::integer(-1)}).shape(), (Shape{1, 2, 3}));
  EXPECT_EQ(index(x, {I::ellipsis(), I::none()}).shape(), (Shape{2, 3, 4, 1}));
  Tensor rows = index(x, {I::integer(0), I::tensor_index(i64({2, 0, 2, 1}, {2, 2}))});
  EXPECT_EQ(rows.shape(), (Shape{2, 2, 4}));
  expect_near(index(rows, {I::slice({}, {}), I::slice({}, {}), I::integer(0)}), {8, 0, 8, 4});
  Tensor mask = greater_than(index(x, {I::integer(0)}), Tensor::scalar(8.5, DType::FLOAT64));
  expect_near(index(x, {I::integer(0), I::tensor_index(mask)}), {9, 10, 11});
  EXPECT_THROW(index(x, {I::integer(2)}), IndexError);
  EXPECT_THROW(index(x, {I::integer(0), I::integer(0), I::integer(0), I::integer(0)}), IndexError);
  EXPECT_THROW(index(x, {I::slice({}, {}, 0)}), ValueError);
  Tensor g = random_input({3, 4});
  expect_gradients_match(
      [](const Inputs& in) {
        return index(in[0], {I::slice(-1, {}, -2), I::none(), I::tensor_index(i64({3, 3}, {2}))});
      },
      {g});
}

TEST(IndexingTest, PutWritesTheSelection) {
  Tensor x = Tensor::zeros({3, 4});
  index_put_(x, {I::slice({}, {}, 2), I::integer(1)}, Tensor::scalar(5.0, DType::FLOAT64));
  expect_near(x, {0, 5, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0});
  index_put_(x, {I::integer(1)}, f64({1, 2, 3, 4}, {4}));
  expect_near(index(x, {I::integer(1)}), {1, 2, 3, 4});
  index_put_(x, {I::tensor_index(greater_than(x, Tensor::scalar(2.5, DType::FLOAT32)))},
             Tensor::scalar(-1.0));
  expect_near(x, {0, 5 - 6, 0, 0, 1, 2, -1, -1, 0, -1, 0, 0});
  EXPECT_THROW(index_put_(x, {I::integer(0)}, f64({1, 2}, {2})), ValueError);
}

}  // namespace
}  // namespace crew
