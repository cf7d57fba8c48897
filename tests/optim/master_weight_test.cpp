// Optimizers over bfloat16/float16 parameters (crew.amp.decorate's level O2): the update runs
// in float32, on a master weight kept across steps with multi_precision, so updates smaller
// than the 16-bit spacing add up; accumulators are float32; state_dict carries the master
// weights and resumes exactly.
#include <gtest/gtest.h>

#include "crew/optim/optim.h"

namespace crew::optim {
namespace {

Tensor bf16_param(double value, int64_t n = 4) {
  Tensor p = Tensor::full({n}, value, DType::BFLOAT16);
  p.set_stop_gradient(false);
  return p;
}

void set_grad(Tensor& p, double g) { p.set_grad(Tensor::full(p.shape(), g, p.dtype())); }

// Counts, at each update, the master weights holding a float32 gradient copy.
class CountingSGD : public SGD {
 public:
  using SGD::SGD;
  size_t max_live_grads = 0;

 protected:
  void update(size_t index, Tensor& param, const Tensor& grad, double lr) override {
    size_t live = 0;
    for (size_t j = 0; j < 3; ++j) live += master_weight(j).defined() && master_weight(j).grad().defined();
    max_live_grads = std::max(max_live_grads, live);
    SGD::update(index, param, grad, lr);
  }
};

// Without gradient clipping a step converts one 16-bit gradient to float32 at a time (the copy
// freed after its update), not all of them up front: O2's peak memory.
TEST(MasterWeight, FloatGradientCopiesLiveOneAtATime) {
  Tensor a = bf16_param(1.0), b = bf16_param(2.0), c = bf16_param(3.0);
  CountingSGD opt(std::vector<Tensor>{a, b, c}, {.learning_rate = 0.5});
  opt.set_multi_precision(true);
  for (int s = 0; s < 2; ++s) {
    for (Tensor* p : {&a, &b, &c}) set_grad(*p, 1.0);
    opt.step();
  }
  EXPECT_EQ(opt.max_live_grads, 1u);
  EXPECT_EQ(c.to_vector<float>()[0], 2.0f);  // 3 - 2 * 0.5, written back in bfloat16
  EXPECT_FALSE(opt.master_weight(2).grad().defined());
}

// The float32 gradient copies of parameters of different sizes all live in one buffer (the
// largest one's size) instead of a new allocation each: the varied sizes left the heap
// fragmented (ResNet-18 O2's peak RSS, docs/benchmarks.md).
class SharingSGD : public SGD {
 public:
  using SGD::SGD;
  std::vector<Tensor> grads;

 protected:
  void update(size_t index, Tensor& param, const Tensor& grad, double lr) override {
    grads.push_back(grad);
    SGD::update(index, param, grad, lr);
  }
};

TEST(MasterWeight, FloatGradientCopiesShareOneBuffer) {
  Tensor a = bf16_param(1.0, 3), b = bf16_param(2.0, 7), c = bf16_param(3.0, 5);
  SharingSGD opt(std::vector<Tensor>{a, b, c}, {.learning_rate = 0.5});
  opt.set_multi_precision(true);
  set_grad(a, 1.0);
  set_grad(b, 2.0);
  set_grad(c, 4.0);
  opt.step();
  ASSERT_EQ(opt.grads.size(), 3u);
  EXPECT_TRUE(opt.grads[0].shares_storage(opt.grads[1]));
  EXPECT_TRUE(opt.grads[1].shares_storage(opt.grads[2]));
  EXPECT_EQ(opt.grads[1].shape(), (Shape{7}));
  EXPECT_EQ(opt.grads[2].to_vector<float>(), std::vector<float>(5, 4.0f));
  EXPECT_EQ(a.to_vector<float>(), std::vector<float>(3, 0.5f));
  EXPECT_EQ(b.to_vector<float>(), std::vector<float>(7, 1.0f));
  EXPECT_EQ(c.to_vector<float>(), std::vector<float>(5, 1.0f));
}

TEST(MasterWeight, SmallUpdatesAddUpOnlyWithMasterWeights) {
  // bfloat16's spacing at 1.0 is 2^-7: one step of 0.001 rounds back to 1.0.
  Tensor kept = bf16_param(1.0), plain = bf16_param(1.0);
  SGD with_master({kept}, {.learning_rate = 0.001});
  with_master.set_multi_precision(true);
  SGD without({plain}, {.learning_rate = 0.001});
  for (int s = 0; s < 20; ++s) {
    set_grad(kept, 1.0);
    set_grad(plain, 1.0);
    with_master.step();
    without.step();
  }
  EXPECT_EQ(kept.dtype(), DType::BFLOAT16);
  EXPECT_EQ(plain.to_vector<float>()[0], 1.0f);
  EXPECT_NEAR(with_master.master_weight(0).to_vector<double>()[0], 0.98, 1e-6);
  EXPECT_EQ(with_master.master_weight(0).dtype(), DType::FLOAT32);
  EXPECT_NEAR(kept.to_vector<double>()[0], 0.98, 4e-3);  // 0.98 rounded to bfloat16
}

TEST(MasterWeight, AdamAccumulatorsAreFloat32AndStateResumesExactly) {
  Tensor a = bf16_param(0.5, 6);
  Adam opt({a}, {.learning_rate = 0.01});
  opt.set_multi_precision(true);
  for (int s = 0; s < 3; ++s) {
    set_grad(a, 0.1 * (s + 1));
    opt.step();
  }
  StateDict sd = opt.state_dict();
  ASSERT_TRUE(sd.contains("0.master_weight"));
  EXPECT_EQ(sd.at("0.moment1").dtype(), DType::FLOAT32);

  Tensor b = a.detach().clone().set_stop_gradient(false);
  Adam resumed({b}, {.learning_rate = 0.01});
  resumed.set_multi_precision(true);
  resumed.set_state_dict(sd);
  for (int s = 0; s < 3; ++s) {
    set_grad(a, -0.05 * (s + 1));
    set_grad(b, -0.05 * (s + 1));
    opt.step();
    resumed.step();
  }
  EXPECT_EQ(a.to_vector<float>(), b.to_vector<float>());
  EXPECT_EQ(opt.master_weight(0).to_vector<float>(), resumed.master_weight(0).to_vector<float>());
}

TEST(MasterWeight, ClippingSeesFloat32Gradients) {
  Tensor p = bf16_param(1.0, 4);
  SGD opt({p}, {.learning_rate = 1.0, .grad_clip = std::make_shared<ClipGradByGlobalNorm>(0.5)});
  opt.set_multi_precision(true);
  set_grad(p, 10.0);  // norm 20, clipped to 0.5: each element moves by 0.25
  opt.step();
  EXPECT_NEAR(p.to_vector<double>()[0], 0.75, 1e-6);
}

TEST(MasterWeight, AMasterWeightForAFloat32ParameterIsRejected) {
  Tensor p = Tensor::full({2}, 1.0, DType::FLOAT32);
  p.set_stop_gradient(false);
  SGD opt({p}, {.learning_rate = 0.1});
  StateDict sd = opt.state_dict();
  sd.insert("0.master_weight", Tensor::full({2}, 1.0, DType::FLOAT32));
  EXPECT_THROW(opt.set_state_dict(sd), ValueError);
}

}  // namespace
}  // namespace crew::optim
