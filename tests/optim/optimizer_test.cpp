// Each optimizer against hand-computed steps on tiny tensors with known gradients.
#include <gtest/gtest.h>

#include <cmath>

#include "crew/optim/optim.h"
#include "tests/testing/tensor_expect.h"

namespace crew::optim {
namespace {

using testing::expect_near;

Tensor param(std::vector<float> values) {
  Tensor t = Tensor::from_vector<float>(values);
  t.set_stop_gradient(false);
  return t;
}

void set_grad(Tensor& p, std::vector<float> g) { p.set_grad(Tensor::from_vector<float>(g, p.shape())); }

TEST(SGD, PlainAndWithL2) {
  Tensor p = param({1, 2});
  SGD opt({p}, {.learning_rate = 0.1});
  set_grad(p, {0.5f, -1});
  opt.step();
  expect_near(p, {0.95, 2.1});
  set_grad(p, {1, 1});
  opt.step();
  expect_near(p, {0.85, 2.0});
  EXPECT_EQ(opt.step_count(), 2);

  Tensor q = param({1, 2});
  SGD l2({q}, {.learning_rate = 0.1, .weight_decay = 0.1});
  set_grad(q, {0.5f, -1});
  l2.step();  // g' = g + 0.1 p = [0.6, -0.8]
  expect_near(q, {0.94, 2.08});
}

TEST(SGD, SkipsParametersWithoutGradient) {
  Tensor a = param({1});
  Tensor b = param({5});
  SGD opt({a, b}, {.learning_rate = 1.0});
  set_grad(a, {0.25f});
  opt.step();
  expect_near(a, {0.75});
  expect_near(b, {5});
}

TEST(Momentum, PlainMatchesHandComputation) {
  Tensor p = param({1});
  Momentum opt({p}, {.learning_rate = 0.1, .momentum = 0.9});
  double want[] = {0.9, 0.71, 0.439};  // v = 1, 1.9, 2.71
  for (double w : want) {
    set_grad(p, {1});
    opt.step();
    expect_near(p, {w});
  }
}

TEST(Momentum, NesterovAndL2) {
  Tensor p = param({1});
  Momentum opt({p}, {.learning_rate = 0.1, .momentum = 0.9, .use_nesterov = true});
  set_grad(p, {1});
  opt.step();  // v = 1, p -= 0.1 * (1 + 0.9) = 0.81
  expect_near(p, {0.81});
  set_grad(p, {1});
  opt.step();  // v = 1.9, p -= 0.1 * (1 + 1.71) = 0.539
  expect_near(p, {0.539});

  Tensor q = param({2});
  Momentum l2({q}, {.learning_rate = 0.1, .momentum = 0.5, .weight_decay = 0.5});
  set_grad(q, {1});
  l2.step();  // g' = 1 + 1 = 2, v = 2, q = 2 - 0.2 = 1.8
  expect_near(q, {1.8});
  set_grad(q, {1});
  l2.step();  // g' = 1 + 0.9 = 1.9, v = 1 + 1.9 = 2.9, q = 1.8 - 0.29 = 1.51
  expect_near(q, {1.51});
}

// Paddle's Adam update transcribed in double precision, for comparison.
struct AdamReference {
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8, l2 = 0.0, coeff = 0.0;
  double b1p = 0.9, b2p = 0.999;
  std::vector<double> m1, m2;
  void step(std::vector<double>& p, const std::vector<double>& g, double lr) {
    if (m1.empty()) {
      m1.assign(p.size(), 0.0);
      m2.assign(p.size(), 0.0);
    }
    double lr_t = lr * std::sqrt(1 - b2p) / (1 - b1p);
    for (size_t i = 0; i < p.size(); ++i) {
      double gi = g[i] + l2 * p[i];
      p[i] *= 1 - lr * coeff;
      m1[i] = beta1 * m1[i] + (1 - beta1) * gi;
      m2[i] = beta2 * m2[i] + (1 - beta2) * gi * gi;
      p[i] -= lr_t * m1[i] / (std::sqrt(m2[i]) + eps * std::sqrt(1 - b2p));
    }
    b1p *= beta1;
    b2p *= beta2;
  }
};

TEST(Adam, FirstStepMovesByLearningRate) {
  Tensor p = param({1, -1, 3});
  Adam opt({p}, {.learning_rate = 0.1});
  set_grad(p, {2, -0.5f, 1e-3f});
  opt.step();  // bias-corrected first step: p -= lr * g / (|g| + eps) = lr * sign(g)
  expect_near(p, {0.9, -0.9, 2.9}, 1e-5);
}

TEST(Adam, ThreeStepsMatchReferenceOnOddSizes) {
  // 19 elements: exercises the 8-wide vector loop and its scalar tail.
  std::vector<float> init(19);
  for (int i = 0; i < 19; ++i) init[i] = 0.1f * static_cast<float>(i) - 0.7f;
  Tensor p = param(init);
  Adam opt({p}, {.learning_rate = 0.01, .beta1 = 0.8, .beta2 = 0.99, .epsilon = 1e-6, .weight_decay = 0.05});
  AdamReference ref{.beta1 = 0.8, .beta2 = 0.99, .eps = 1e-6, .l2 = 0.05, .b1p = 0.8, .b2p = 0.99};
  std::vector<double> rp(init.begin(), init.end());
  for (int s = 0; s < 3; ++s) {
    std::vector<float> g(19);
    for (int i = 0; i < 19; ++i) g[i] = std::sin(0.3f * static_cast<float>(i + 7 * s)) * (s + 1);
    set_grad(p, g);
    opt.step();
    ref.step(rp, std::vector<double>(g.begin(), g.end()), 0.01);
    expect_near(p, rp, 2e-6);
  }
}

TEST(Adam, Float64Parameters) {
  Tensor p = Tensor::from_vector<double>({0.5, -2.0});
  p.set_stop_gradient(false);
  Adam opt({p}, {.learning_rate = 0.2});
  AdamReference ref;
  std::vector<double> rp = {0.5, -2.0};
  for (int s = 0; s < 3; ++s) {
    std::vector<double> g = {0.3 * (s + 1), -1.5 + s};
    p.set_grad(Tensor::from_vector<double>(g));
    opt.step();
    ref.step(rp, g, 0.2);
    expect_near(p, rp, 1e-12);
  }
}

TEST(AdamW, DecoupledDecayAndFilter) {
  Tensor w = param({1, 2});
  Tensor b = param({1});
  AdamW opt(NamedParameters{{"fc.weight", w}, {"fc.bias", b}},
            {.learning_rate = 0.1, .weight_decay = 0.01, .apply_decay_param_fun = [](const std::string& n) {
               return !n.ends_with("bias");
             }});
  set_grad(w, {0, 0});
  set_grad(b, {0});
  opt.step();  // zero gradients: only the decay acts, p *= 1 - 0.1 * 0.01
  expect_near(w, {0.999, 1.998}, 1e-7);
  expect_near(b, {1.0}, 1e-7);

  Tensor q = param({1, -1, 0.5f});
  AdamW full({q}, {.learning_rate = 0.05, .weight_decay = 0.1});
  AdamReference ref{.coeff = 0.1};
  std::vector<double> rp = {1, -1, 0.5};
  for (int s = 0; s < 3; ++s) {
    std::vector<float> g = {0.2f * s - 0.1f, 1.0f, -0.3f};
    set_grad(q, g);
    full.step();
    ref.step(rp, std::vector<double>(g.begin(), g.end()), 0.05);
    expect_near(q, rp, 1e-6);
  }
}

TEST(Optimizer, LearningRateAndErrors) {
  Tensor p = param({1});
  SGD opt({p}, {.learning_rate = 0.5});
  EXPECT_DOUBLE_EQ(opt.get_lr(), 0.5);
  opt.set_lr(0.25);
  EXPECT_DOUBLE_EQ(opt.get_lr(), 0.25);
  EXPECT_THROW(opt.set_lr(-1), ValueError);
  EXPECT_THROW(SGD(std::vector<Tensor>{}), ValueError);
  EXPECT_THROW(SGD(std::vector<Tensor>{p, p}), ValueError);
  EXPECT_THROW(SGD(std::vector<Tensor>{Tensor::arange(3)}), ValueError);  // int64 is not optimizable
  EXPECT_THROW(Adam({p}, {.beta1 = 1.0}), ValueError);

  auto sched = std::make_shared<StepDecay>(0.1, 2, 0.5);
  Momentum m({p}, {.learning_rate = sched});
  EXPECT_DOUBLE_EQ(m.get_lr(), 0.1);
  sched->step();
  sched->step();
  EXPECT_DOUBLE_EQ(m.get_lr(), 0.05);
  EXPECT_THROW(m.set_lr(0.3), StateError);
}

TEST(Optimizer, ClearGrad) {
  Tensor p = param({1, 2});
  SGD opt({p});
  set_grad(p, {3, 4});
  opt.clear_grad();
  ASSERT_TRUE(p.grad().defined());
  expect_near(p.grad(), {0, 0});
  opt.clear_grad(false);
  EXPECT_FALSE(p.grad().defined());
}

}  // namespace
}  // namespace crew::optim
