// PolynomialDecay, NoamDecay, NaturalExpDecay, InverseTimeDecay, LambdaDecay, OneCycleLR,
// CyclicLR and ReduceOnPlateau: their sequences against Paddle 2.4's formulas, worked here.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "crew/optim/lr_cycle.h"
#include "crew/optim/lr_formula.h"
#include "crew/optim/lr_plateau.h"

namespace crew::optim {
namespace {

std::vector<double> run(LRScheduler& s, int n) {
  std::vector<double> out;
  for (int i = 0; i < n; ++i) {
    out.push_back(s.last_lr());
    s.step();
  }
  return out;
}

void expect_rates(const std::vector<double>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-12) << "epoch " << i;
}

TEST(PolynomialDecay, DecaysToEndLrAndCycles) {
  PolynomialDecay plain(1.0, 4, 0.2, 2.0);
  // (1 - 0.2) * (1 - t/4)^2 + 0.2, t capped at 4
  expect_rates(run(plain, 6), {1.0, 0.65, 0.4, 0.25, 0.2, 0.2});
  PolynomialDecay cyc(1.0, 2, 0.0, 1.0, /*cycle=*/true);
  // T' = 2 * max(1, ceil(t/2)): t=0: 1; 1: 0.5; 2: 0; 3: 1 - 3/4; 4: 0; 5: 1 - 5/6
  expect_rates(run(cyc, 6), {1.0, 0.5, 0.0, 0.25, 0.0, 1.0 / 6});
  EXPECT_THROW(PolynomialDecay(1.0, 0), ValueError);
}

TEST(NoamDecay, WarmsUpThenDecays) {
  NoamDecay s(100.0, 4, 2.0);
  std::vector<double> want;
  for (int t = 0; t < 7; ++t) {
    const double a = t == 0 ? 1.0 : std::pow(t, -0.5);
    want.push_back(2.0 * 0.1 * std::min(a, std::pow(4.0, -1.5) * t));
  }
  expect_rates(run(s, 7), want);
  EXPECT_DOUBLE_EQ(want[0], 0.0);
  EXPECT_GT(want[4], want[5]);  // the peak is at warmup_steps
}

TEST(NaturalExpAndInverseTimeDecay, FollowTheirFormulas) {
  NaturalExpDecay e(0.5, 0.1);
  expect_rates(run(e, 3), {0.5, 0.5 * std::exp(-0.1), 0.5 * std::exp(-0.2)});
  InverseTimeDecay inv(0.5, 0.1);
  expect_rates(run(inv, 3), {0.5, 0.5 / 1.1, 0.5 / 1.2});
}

TEST(LambdaDecay, MultipliesByTheFunction) {
  LambdaDecay s(0.5, [](int64_t e) { return std::pow(0.95, static_cast<double>(e)); });
  expect_rates(run(s, 3), {0.5, 0.475, 0.45125});
  LambdaDecay resumed(
      0.5, [](int64_t e) { return 1.0 / static_cast<double>(e + 1); }, /*last_epoch=*/3);
  EXPECT_EQ(resumed.last_epoch(), 4);
  EXPECT_DOUBLE_EQ(resumed.last_lr(), 0.1);
}

TEST(MultiplicativeDecay, MultipliesTheFactorsOfEachEpoch) {
  MultiplicativeDecay s(1.0, [](int64_t e) { return 1.0 / static_cast<double>(e + 1); });
  expect_rates(run(s, 4), {1.0, 0.5, 0.5 / 3, 0.5 / 12});
}

double cos_anneal(double from, double to, double pct) {
  return to + (from - to) / 2.0 * (std::cos(std::numbers::pi * pct) + 1.0);
}

TEST(OneCycleLR, TwoAndThreePhases) {
  // max 1.0, 10 steps, divide 25 -> initial 0.04, phase_pct 0.3: boundaries 0, 2, 9.
  OneCycleLR two(OneCycleLROptions{.max_learning_rate = 1.0, .total_steps = 10});
  std::vector<double> want;
  for (int t = 0; t <= 10; ++t) {
    want.push_back(t <= 2 ? cos_anneal(0.04, 1.0, t / 2.0) : cos_anneal(1.0, 1e-4, (t - 2) / 7.0));
  }
  expect_rates(run(two, 10), std::vector<double>(want.begin(), want.begin() + 10));
  EXPECT_NEAR(two.last_lr(), want[10], 1e-12);  // step 10 (past the end of the anneal) is allowed
  EXPECT_THROW(two.step(), ValueError);         // 11 > total_steps

  OneCycleLR lin(OneCycleLROptions{.max_learning_rate = 1.0,
                                   .total_steps = 10,
                                   .phase_pct = 0.4,
                                   .anneal_strategy = AnnealStrategy::LINEAR,
                                   .three_phase = true});
  // boundaries 0, 3, 6, 9: 0.04 -> 1 -> 0.04 -> 1e-4
  std::vector<double> got = run(lin, 10);
  EXPECT_NEAR(got[3], 1.0, 1e-12);
  EXPECT_NEAR(got[1], 0.04 + 0.96 / 3, 1e-12);
  EXPECT_NEAR(got[6], 0.04, 1e-12);
  EXPECT_NEAR(got[9], 1e-4, 1e-12);
  EXPECT_NEAR(got[7], 0.04 + (1e-4 - 0.04) / 3, 1e-12);
  EXPECT_THROW(OneCycleLR(OneCycleLROptions{.total_steps = 10, .phase_pct = 0.5, .three_phase = true}),
               ValueError);
}

TEST(CyclicLR, TriangularModes) {
  CyclicLR tri(CyclicLROptions{.base_learning_rate = 0.1, .max_learning_rate = 0.5, .step_size_up = 2});
  expect_rates(run(tri, 9), {0.1, 0.3, 0.5, 0.3, 0.1, 0.3, 0.5, 0.3, 0.1});
  CyclicLR tri2(CyclicLROptions{.base_learning_rate = 0.1,
                                .max_learning_rate = 0.5,
                                .step_size_up = 1,
                                .step_size_down = 3,
                                .mode = CyclicMode::TRIANGULAR2});
  // cycle 4: up 1, down 3; the second cycle's height halves
  expect_rates(run(tri2, 9),
               {0.1, 0.5, 0.1 + 0.4 * 2 / 3, 0.1 + 0.4 / 3, 0.1, 0.3, 0.1 + 0.2 * 2 / 3, 0.1 + 0.2 / 3, 0.1});
  CyclicLR exp(CyclicLROptions{.base_learning_rate = 0.0,
                               .max_learning_rate = 1.0,
                               .step_size_up = 2,
                               .mode = CyclicMode::EXP_RANGE,
                               .exp_gamma = 0.5});
  expect_rates(run(exp, 4), {0.0, 0.5 * 0.5, 1.0 * 0.25, 0.5 * 0.125});
  CyclicLR custom(CyclicLROptions{
      .base_learning_rate = 0.0, .max_learning_rate = 1.0, .step_size_up = 1, .scale_fn = [](double cycle) {
        return 1.0 / cycle;
      }});
  expect_rates(run(custom, 4), {0.0, 1.0, 0.0, 0.5});
}

TEST(ReduceOnPlateau, ReducesAfterPatienceThenCoolsDown) {
  ReduceOnPlateau s(ReduceOnPlateauOptions{
      .learning_rate = 1.0, .factor = 0.5, .patience = 1, .cooldown = 1, .min_lr = 0.2});
  EXPECT_EQ(s.last_epoch(), 0);
  std::vector<double> lrs;
  for (double loss : {1.0, 1.0, 1.0, 5.0, 5.0, 5.0, 5.0, 5.0, 5.0}) {
    s.step(loss);
    lrs.push_back(s.last_lr());
  }
  // best 1; bad 1; bad 2 -> 0.5 (cooldown); cooled; bad 1; bad 2 -> 0.25; cooled; 1; 2 -> max(0.125, 0.2)
  expect_rates(lrs, {1.0, 1.0, 0.5, 0.5, 0.5, 0.25, 0.25, 0.25, 0.2});
  EXPECT_EQ(s.last_epoch(), 9);
  s.step(0.1, 20);  // cooling down: the metric is not looked at
  EXPECT_EQ(s.last_epoch(), 20);
  EXPECT_EQ(s.best(), 1.0);
  s.step(0.1);
  EXPECT_EQ(s.best(), 0.1);
}

TEST(ReduceOnPlateau, MaxModeAndAbsoluteThreshold) {
  ReduceOnPlateau s(ReduceOnPlateauOptions{
      .learning_rate = 1.0, .mode_max = true, .patience = 0, .threshold = 0.1, .threshold_abs = true});
  s.step(0.5);
  s.step(0.65);  // better by more than 0.1
  EXPECT_DOUBLE_EQ(s.last_lr(), 1.0);
  s.step(0.7);  // not by more than 0.1: reduced (patience 0)
  EXPECT_DOUBLE_EQ(s.last_lr(), 0.1);
  EXPECT_THROW(ReduceOnPlateau(ReduceOnPlateauOptions{.factor = 1.0}), ValueError);
}

}  // namespace
}  // namespace crew::optim
