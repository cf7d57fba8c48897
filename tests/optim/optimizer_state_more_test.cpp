// Checkpoints of RMSProp, Adagrad, Adadelta, Adamax, Lamb and of a ReduceOnPlateau schedule:
// state_dict -> set_state_dict resumes bit-exactly (as optimizer_state_test.cpp for the others).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>

#include "crew/optim/optim.h"
#include "tests/testing/optim_state.h"

namespace crew::optim {
namespace {

using testing::bit_equal;
using testing::make_params;
using testing::set_grads;
using Factory = testing::OptimizerFactory;

// 3 steps, then state_dict into a fresh optimizer over copied parameters; 3 more steps of
// both must agree bit for bit.
void check_resume(const Factory& make) {
  std::vector<Tensor> ps = make_params();
  auto opt = make(ps);
  for (int s = 0; s < 3; ++s) {
    set_grads(ps, s);
    opt->step();
  }
  std::vector<Tensor> qs = make_params();
  for (size_t i = 0; i < qs.size(); ++i) qs[i].copy_(ps[i]);
  auto resumed = make(qs);
  resumed->set_state_dict(opt->state_dict());
  EXPECT_EQ(resumed->step_count(), 3);
  for (int s = 3; s < 6; ++s) {
    set_grads(ps, s);
    set_grads(qs, s);
    opt->step();
    resumed->step();
    for (size_t i = 0; i < ps.size(); ++i)
      EXPECT_TRUE(bit_equal(ps[i], qs[i])) << "param " << i << " step " << s;
  }
}

TEST(OptimizerStateMore, RMSPropCenteredWithMomentumResumes) {
  check_resume([](std::vector<Tensor> ps) {
    return std::make_unique<RMSProp>(
        ps, RMSPropOptions{.learning_rate = 0.01, .momentum = 0.9, .centered = true});
  });
}

TEST(OptimizerStateMore, AdagradAndAdadeltaResume) {
  check_resume([](std::vector<Tensor> ps) {
    return std::make_unique<Adagrad>(ps,
                                     AdagradOptions{.learning_rate = 0.1, .initial_accumulator_value = 0.1});
  });
  check_resume([](std::vector<Tensor> ps) { return std::make_unique<Adadelta>(ps, AdadeltaOptions{}); });
}

TEST(OptimizerStateMore, AdamaxAndLambResume) {
  check_resume([](std::vector<Tensor> ps) {
    return std::make_unique<Adamax>(ps, AdamaxOptions{.learning_rate = 0.01, .weight_decay = 0.01});
  });
  check_resume(
      [](std::vector<Tensor> ps) { return std::make_unique<Lamb>(ps, LambOptions{.learning_rate = 0.01}); });
}

TEST(OptimizerStateMore, StateDictKeys) {
  std::vector<Tensor> ps = make_params();
  RMSProp plain(ps, {.learning_rate = 0.1});
  set_grads(ps, 0);
  plain.step();
  EXPECT_EQ(plain.state_dict().keys(),
            (std::vector<std::string>{"0.mean_square", "0.momentum", "1.mean_square", "1.momentum", "@step",
                                      "@lr"}));
  Adamax adamax(ps);
  adamax.step();
  adamax.step();
  EXPECT_NEAR(adamax.state_dict().at("0.beta1_pow_acc").item(), 0.729, 1e-15);
  Adam adam(ps);
  EXPECT_THROW(adam.set_state_dict(adamax.state_dict()), ValueError);  // inf_norm is not Adam's
}

TEST(OptimizerStateMore, ReduceOnPlateauResumesThroughTheOptimizer) {
  auto sched = std::make_shared<ReduceOnPlateau>(
      ReduceOnPlateauOptions{.learning_rate = 1.0, .patience = 1, .cooldown = 1});
  std::vector<Tensor> ps = make_params();
  SGD opt(ps, {.learning_rate = sched});
  for (double loss : {1.0, 2.0, 2.0, 0.5}) sched->step(loss);  // reduced at the third: 0.1, cooldown 1
  StateDict sd = opt.state_dict();
  auto fresh = std::make_shared<ReduceOnPlateau>(
      ReduceOnPlateauOptions{.learning_rate = 1.0, .patience = 1, .cooldown = 1});
  SGD resumed(make_params(), {.learning_rate = fresh});
  resumed.set_state_dict(sd);
  EXPECT_EQ(fresh->last_epoch(), 4);
  EXPECT_DOUBLE_EQ(fresh->last_lr(), sched->last_lr());
  EXPECT_EQ(fresh->best(), sched->best());
  EXPECT_EQ(fresh->num_bad_epochs(), sched->num_bad_epochs());
  EXPECT_EQ(fresh->cooldown_counter(), sched->cooldown_counter());
  for (double loss : {0.6, 0.7, 0.8}) {
    sched->step(loss);
    fresh->step(loss);
    EXPECT_DOUBLE_EQ(fresh->last_lr(), sched->last_lr());
  }
}

}  // namespace
}  // namespace crew::optim
