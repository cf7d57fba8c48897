#include <gtest/gtest.h>

#include <cmath>

#include "crew/optim/optim.h"
#include "tests/testing/tensor_expect.h"

namespace crew::optim {
namespace {

using testing::expect_near;

Tensor with_grad(std::vector<float> value, std::vector<float> grad) {
  Tensor t = Tensor::from_vector<float>(value);
  t.set_stop_gradient(false);
  t.set_grad(Tensor::from_vector<float>(grad));
  return t;
}

TEST(GradClip, GlobalNormScalesAllGradientsTogether) {
  Tensor a = with_grad({0, 0}, {3, 0});
  Tensor b = with_grad({0}, {4});  // global norm 5
  Tensor c = Tensor::zeros({2});   // no gradient: ignored
  EXPECT_NEAR(ClipGradByGlobalNorm::global_norm({a, b, c}), 5.0, 1e-12);
  ClipGradByGlobalNorm(1.0)({a, b, c});
  expect_near(a.grad(), {0.6, 0});
  expect_near(b.grad(), {0.8});
  ClipGradByGlobalNorm(10.0)({a, b});  // below the threshold: unchanged
  expect_near(a.grad(), {0.6, 0});
  EXPECT_THROW(ClipGradByGlobalNorm(0.0), ValueError);
}

TEST(GradClip, NormIsPerTensorAndValueClamps) {
  Tensor a = with_grad({0, 0}, {3, 4});
  Tensor b = with_grad({0}, {0.5f});
  ClipGradByNorm(1.0)({a, b});
  expect_near(a.grad(), {0.6, 0.8});
  expect_near(b.grad(), {0.5});
  Tensor c = with_grad({0, 0, 0}, {-3, 0.25f, 2});
  ClipGradByValue(1.0)({c});
  expect_near(c.grad(), {-1, 0.25, 1});
  ClipGradByValue(0.5, 0.0)({c});
  expect_near(c.grad(), {0, 0.25, 0.5});
  EXPECT_THROW(ClipGradByValue(0.0, 1.0), ValueError);
}

TEST(GradClip, OptimizerAppliesItBeforeTheUpdate) {
  Tensor p = with_grad({1, 1}, {30, 40});
  SGD opt(std::vector<Tensor>{p},
          {.learning_rate = 0.1, .grad_clip = std::make_shared<ClipGradByGlobalNorm>(5.0)});
  opt.step();  // grad clipped to [3, 4]
  expect_near(p, {0.7, 0.6});
  Tensor q = with_grad({0}, {100});
  Adam adam(std::vector<Tensor>{q},
            {.learning_rate = 0.1, .grad_clip = std::make_shared<ClipGradByValue>(1.0)});
  adam.step();
  expect_near(q.grad(), {1.0});
}

}  // namespace
}  // namespace crew::optim
