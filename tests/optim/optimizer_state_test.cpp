// Optimizer checkpoints: state_dict -> safetensors file -> set_state_dict resumes bit-exactly.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>

#include "crew/optim/optim.h"
#include "tests/testing/optim_state.h"
#include "crew/tensor/safetensors.h"
#include "tests/testing/temp_dir.h"

namespace crew::optim {
namespace {

using testing::bit_equal;
using testing::make_params;
using testing::set_grads;
using Factory = testing::OptimizerFactory;

// Runs 3 steps, checkpoints params + optimizer through a file, resumes a fresh optimizer on
// fresh parameters, and checks that 3 further steps match the uninterrupted run bit for bit.
void check_resume(
    const Factory& make, const std::function<void()>& on_step = [] {}) {
  testing::TempDir tmp;
  const std::string& dir = tmp.path();
  std::vector<Tensor> ps = make_params();
  auto opt = make(ps);
  for (int s = 0; s < 3; ++s) {
    set_grads(ps, s);
    opt->step();
    on_step();
  }
  StateDict params;
  for (size_t i = 0; i < ps.size(); ++i) params.insert(std::to_string(i), ps[i]);
  save(params, dir + "/params.safetensors");
  save(opt->state_dict(), dir + "/opt.safetensors");

  std::vector<Tensor> qs = make_params();
  StateDict loaded = load(dir + "/params.safetensors");
  for (size_t i = 0; i < qs.size(); ++i) qs[i].copy_(loaded.at(std::to_string(i)));
  auto resumed = make(qs);
  resumed->set_state_dict(load(dir + "/opt.safetensors"));
  EXPECT_EQ(resumed->step_count(), 3);
  EXPECT_EQ(resumed->get_lr(), opt->get_lr());
  for (int s = 3; s < 6; ++s) {
    set_grads(ps, s);
    set_grads(qs, s);
    opt->step();
    resumed->step();
    on_step();
    for (size_t i = 0; i < ps.size(); ++i)
      EXPECT_TRUE(bit_equal(ps[i], qs[i])) << "param " << i << " step " << s;
  }
}

TEST(OptimizerState, MomentumResumes) {
  check_resume([](std::vector<Tensor> ps) {
    return std::make_unique<Momentum>(ps, MomentumOptions{.learning_rate = 0.05, .use_nesterov = true});
  });
}

TEST(OptimizerState, AdamResumes) {
  check_resume([](std::vector<Tensor> ps) {
    return std::make_unique<Adam>(ps, AdamOptions{.learning_rate = 0.01, .weight_decay = 0.01});
  });
}

TEST(OptimizerState, AdamWWithSchedulerResumes) {
  // The schedule is shared by the optimizer pair via the factory's capture; the resumed
  // optimizer gets its own schedule, restored from the checkpoint.
  auto first = std::make_shared<CosineAnnealingDecay>(0.02, 4, 0.001);
  int made = 0;
  std::shared_ptr<CosineAnnealingDecay> second;
  check_resume(
      [&](std::vector<Tensor> ps) {
        std::shared_ptr<CosineAnnealingDecay> s = first;
        if (made++ == 1) s = second = std::make_shared<CosineAnnealingDecay>(0.02, 4, 0.001);
        return std::make_unique<AdamW>(ps, AdamWOptions{.learning_rate = s});
      },
      [&] {
        first->step();
        if (second) second->step();
      });
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(second->last_epoch(), first->last_epoch());
}

TEST(OptimizerState, KeysUseParameterNames) {
  Tensor w = Tensor::ones({2, 3});
  w.set_stop_gradient(false);
  Adam opt(NamedParameters{{"linear1.weight", w}});
  w.set_grad(Tensor::ones({2, 3}));
  opt.step();
  StateDict sd = opt.state_dict();
  EXPECT_EQ(sd.keys(), (std::vector<std::string>{"linear1.weight.moment1", "linear1.weight.moment2",
                                                 "linear1.weight.beta1_pow_acc",
                                                 "linear1.weight.beta2_pow_acc", "@step", "@lr"}));
  EXPECT_NEAR(sd.at("linear1.weight.beta1_pow_acc").item(), 0.81, 1e-15);
}

TEST(OptimizerState, RejectsForeignState) {
  std::vector<Tensor> ps = make_params();
  Adam adam(ps);
  set_grads(ps, 0);
  adam.step();
  StateDict good = adam.state_dict();

  Momentum mom(ps);
  EXPECT_THROW(mom.set_state_dict(good), ValueError);  // moment1 is not a Momentum accumulator

  StateDict wrong_param;
  for (const auto& [k, t] : good) wrong_param.insert(k == "1.moment1" ? "7.moment1" : k, t);
  try {
    adam.set_state_dict(wrong_param);
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("7.moment1"), std::string::npos) << e.what();
  }

  StateDict wrong_shape;
  for (const auto& [k, t] : good) wrong_shape.insert(k, k == "0.moment2" ? Tensor::zeros({3}) : t);
  try {
    adam.set_state_dict(wrong_shape);
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("0.moment2"), std::string::npos) << msg;
    EXPECT_NE(msg.find("[3]"), std::string::npos) << msg;
    EXPECT_NE(msg.find("[2, 2]"), std::string::npos) << msg;
  }

  StateDict no_step;
  for (const auto& [k, t] : good) {
    if (k != "@step") no_step.insert(k, t);
  }
  EXPECT_THROW(adam.set_state_dict(no_step), ValueError);
  EXPECT_EQ(adam.step_count(), 1) << "failed loads must leave the optimizer unchanged";
}

}  // namespace
}  // namespace crew::optim
