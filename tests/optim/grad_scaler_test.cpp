// crew::optim::GradScaler: Paddle's dynamic scale rule on injected infs, skipped steps leave
// the parameters alone, good steps see the unscaled gradient, the call order is checked, the
// state round-trips, and the sync decides (an inf elsewhere skips the step here too).
#include "crew/optim/grad_scaler.h"

#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "crew/core/error.h"
#include "crew/optim/sgd.h"

namespace crew::optim {
namespace {

struct OneParam {
  Tensor w = Tensor::full({3}, 1.0, DType::FLOAT32).set_stop_gradient(false);
  SGD opt{{w}, {.learning_rate = 0.01}};

  // loss = 3 * sum(w) through the scaler: w's gradient is 3 * scale, then maybe an inf.
  void backward(const GradScaler& scaler, bool inject_inf) {
    w.set_grad(Tensor::full({3}, 3.0 * scaler.scale(), DType::FLOAT32));
    if (inject_inf) {
      std::vector<float> g = {3.0F, std::numeric_limits<float>::infinity(), 3.0F};
      w.set_grad(Tensor::from_vector<float>(g, {3}));
    }
  }
};

TEST(GradScaler, FollowsPaddlesRuleOnInjectedInfs) {
  OneParam m;
  GradScaler scaler({.init_loss_scaling = 1024, .incr_every_n_steps = 2, .decr_every_n_nan_or_inf = 2});
  const std::vector<bool> infs = {false, false, true, true, false, true, false, false};
  const std::vector<double> want = {1024, 2048, 2048, 1024, 1024, 1024, 1024, 2048};
  for (size_t s = 0; s < infs.size(); ++s) {
    m.backward(scaler, infs[s]);
    const std::vector<float> before = m.w.to_vector<float>();
    EXPECT_EQ(scaler.step(m.opt), !infs[s]) << s;
    scaler.update();
    const std::vector<float> after = m.w.to_vector<float>();
    for (size_t i = 0; i < 3; ++i) {
      EXPECT_FLOAT_EQ(after[i], infs[s] ? before[i] : before[i] - 0.01F * 3.0F) << "step " << s;
    }
    EXPECT_EQ(scaler.scale(), want[s]) << "step " << s;
  }
}

TEST(GradScaler, BackwardScalesTheLossGradient) {
  Tensor w = Tensor::full({2}, 1.0, DType::FLOAT32).set_stop_gradient(false);
  GradScaler scaler({.init_loss_scaling = 8});
  scaler.backward(w);  // a "loss" of shape [2]: gradient = scale
  EXPECT_EQ(w.grad().to_vector<float>(), (std::vector<float>{8, 8}));
}

TEST(GradScaler, CallOrderIsChecked) {
  OneParam m;
  GradScaler scaler({.init_loss_scaling = 4});
  m.backward(scaler, false);
  scaler.unscale_(m.opt);
  EXPECT_EQ(m.w.grad().to_vector<float>(), (std::vector<float>{3, 3, 3}));
  EXPECT_THROW(scaler.unscale_(m.opt), StateError);
  scaler.step(m.opt);
  EXPECT_THROW(scaler.step(m.opt), StateError);
  EXPECT_THROW(scaler.unscale_(m.opt), StateError);
  scaler.update();
  m.backward(scaler, false);
  EXPECT_TRUE(scaler.step(m.opt));
}

TEST(GradScaler, StateDictRoundTrips) {
  OneParam m;
  GradScaler a({.init_loss_scaling = 256,
                .incr_ratio = 3,
                .decr_ratio = 0.25,
                .incr_every_n_steps = 5,
                .decr_every_n_nan_or_inf = 3});
  for (bool inf : {false, true, false, false}) {
    m.backward(a, inf);
    a.minimize(m.opt);
  }
  GradScaler b;
  b.set_state_dict(a.state_dict());
  EXPECT_EQ(b.scale(), 256);
  EXPECT_EQ(b.incr_count(), 2);
  EXPECT_EQ(b.decr_count(), 0);
  EXPECT_EQ(b.options().incr_ratio, 3);
  EXPECT_EQ(b.options().decr_every_n_nan_or_inf, 3);
  EXPECT_THROW(GradScaler().set_state_dict(StateDict()), StateError);
  StateDict missing;
  missing.insert("scale", Tensor::scalar(2.0, DType::FLOAT64));
  EXPECT_THROW(b.set_state_dict(missing), ValueError);
  EXPECT_EQ(b.scale(), 256);  // unchanged by the failed call
}

TEST(GradScaler, TheSyncDecidesForAllRanks) {
  OneParam m;
  // Another rank found an inf: this one skips although its gradients are finite.
  GradScaler scaler({.init_loss_scaling = 8, .decr_every_n_nan_or_inf = 1}, [](bool) { return true; });
  m.backward(scaler, false);
  EXPECT_FALSE(scaler.step(m.opt));
  scaler.update();
  EXPECT_EQ(scaler.scale(), 4);
  EXPECT_EQ(m.w.to_vector<float>(), (std::vector<float>{1, 1, 1}));
}

TEST(GradScaler, DisabledIsAPlainStep) {
  OneParam m;
  GradScaler scaler({.enable = false});
  m.w.set_grad(Tensor::full({3}, 1.0, DType::FLOAT32));
  EXPECT_TRUE(scaler.step(m.opt));
  EXPECT_TRUE(scaler.state_dict().empty());
  EXPECT_FLOAT_EQ(m.w.to_vector<float>()[0], 0.99F);
}

TEST(GradScaler, BadOptionsAreValueErrors) {
  EXPECT_THROW(GradScaler({.incr_ratio = 1.0}), ValueError);
  EXPECT_THROW(GradScaler({.decr_ratio = 1.5}), ValueError);
  EXPECT_THROW(GradScaler({.incr_every_n_steps = 0}), ValueError);
}

}  // namespace
}  // namespace crew::optim
