#include "crew/optim/lr_decay.h"

#include <gtest/gtest.h>

#include <cmath>

namespace crew::optim {
namespace {

// The rates of epochs 0 .. n-1.
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

TEST(ExponentialDecay, FollowsTheFormula) {
  ExponentialDecay s(0.5, 0.9);
  expect_rates(run(s, 4), {0.5, 0.45, 0.405, 0.3645});
  EXPECT_THROW(ExponentialDecay(0.5, 1.0), ValueError);
}

TEST(MultiStepDecay, DecaysAtMilestones) {
  MultiStepDecay s(1.0, {2, 5}, 0.5);
  expect_rates(run(s, 7), {1, 1, 0.5, 0.5, 0.5, 0.25, 0.25});
  EXPECT_THROW(MultiStepDecay(1.0, {5, 2}), ValueError);
  EXPECT_THROW(MultiStepDecay(1.0, {}), ValueError);
}

TEST(PiecewiseDecay, PicksTheValueOfTheInterval) {
  PiecewiseDecay s({3, 6}, {0.1, 0.01, 0.001});
  expect_rates(run(s, 8), {0.1, 0.1, 0.1, 0.01, 0.01, 0.01, 0.001, 0.001});
  EXPECT_THROW(PiecewiseDecay({3}, {0.1}), ValueError);
}

TEST(LinearWarmup, RampsThenFollowsTheWrappedSchedule) {
  auto after = std::make_shared<StepDecay>(0.1, 2, 0.5);
  LinearWarmup s(after, 4, 0.0, 0.1);
  expect_rates(run(s, 8), {0.0, 0.025, 0.05, 0.075, 0.1, 0.1, 0.05, 0.05});
  LinearWarmup constant(0.3, 2, 0.1, 0.3);
  expect_rates(run(constant, 4), {0.1, 0.2, 0.3, 0.3});
  EXPECT_THROW(LinearWarmup(0.1, 0, 0.0, 0.1), ValueError);
}

}  // namespace
}  // namespace crew::optim
