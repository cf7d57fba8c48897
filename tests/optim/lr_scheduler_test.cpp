#include "crew/optim/lr_scheduler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

namespace crew::optim {
namespace {

TEST(StepDecay, FollowsTheFormula) {
  StepDecay s(0.1, 3, 0.5);
  EXPECT_EQ(s.last_epoch(), 0);
  const double want[] = {0.1, 0.1, 0.1, 0.05, 0.05, 0.05, 0.025, 0.025};
  for (int e = 0; e < 8; ++e) {
    EXPECT_EQ(s.last_epoch(), e);
    EXPECT_NEAR(s.last_lr(), want[e], 1e-15) << "epoch " << e;
    s.step();
  }
  s.step(30);
  EXPECT_NEAR(s.last_lr(), 0.1 * std::pow(0.5, 10), 1e-15);
  EXPECT_THROW(StepDecay(0.1, 0), ValueError);
  EXPECT_THROW(StepDecay(0.1, 2, 1.5), ValueError);
}

TEST(CosineAnnealingDecay, RecursionMatchesClosedForm) {
  const double base = 0.5, eta_min = 0.01;
  const int T = 5;
  CosineAnnealingDecay s(base, T, eta_min);
  for (int t = 0; t <= 3 * T; ++t) {
    double closed = eta_min + (base - eta_min) * (1 + std::cos(std::numbers::pi * t / T)) / 2;
    EXPECT_NEAR(s.last_lr(), closed, 1e-12) << "epoch " << t;
    s.step();
  }
  CosineAnnealingDecay z(1.0, 4);
  z.step();
  z.step();
  EXPECT_NEAR(z.last_lr(), 0.5, 1e-12);  // half way: (1 + cos(pi/2)) / 2
  EXPECT_THROW(CosineAnnealingDecay(1.0, 0), ValueError);
}

TEST(LRScheduler, StateDictResumesExactly) {
  CosineAnnealingDecay a(0.3, 7, 0.001);
  for (int i = 0; i < 4; ++i) a.step();
  CosineAnnealingDecay b(0.3, 7, 0.001);
  b.set_state_dict(a.state_dict());
  EXPECT_EQ(b.last_epoch(), 4);
  for (int i = 0; i < 5; ++i) {
    a.step();
    b.step();
    EXPECT_EQ(a.last_lr(), b.last_lr());
  }
  StateDict bad;
  bad.insert("last_lr", Tensor::scalar(0.1, DType::FLOAT64));
  EXPECT_THROW(b.set_state_dict(bad), IndexError);
}

TEST(LRScheduler, ResumesFromLastEpoch) {
  StepDecay s(1.0, 2, 0.1, /*last_epoch=*/3);
  EXPECT_EQ(s.last_epoch(), 4);
  EXPECT_NEAR(s.last_lr(), 0.01, 1e-15);
}

}  // namespace
}  // namespace crew::optim
