// The backward engine: accumulation, retain_graph, stop_gradient, no_grad, detach, leaves.
#include <gtest/gtest.h>

#include <thread>

#include "crew/autograd/autograd.h"
#include "crew/autograd/ops.h"

namespace crew {
namespace {

Tensor param(std::vector<float> v, Shape s) { return Tensor::from_vector(v, s).set_stop_gradient(false); }

TEST(EngineTest, SimpleChainRule) {
  Tensor w = param({1, 2, 3}, {3});
  Tensor x = Tensor::from_vector<float>({4, 5, 6}, {3});
  Tensor loss = sum(mul(mul(w, w), x));  // d/dw = 2 w x
  loss.backward();
  EXPECT_EQ(w.grad().to_vector<float>(), (std::vector<float>{8, 20, 36}));
  EXPECT_FALSE(x.grad().defined());
}

TEST(EngineTest, GradientsAccumulateAcrossBackwardCalls) {
  Tensor w = param({1, 2}, {2});
  sum(mul(w, 3.0)).backward();
  const Tensor first = w.grad();
  sum(mul(w, 3.0)).backward();
  EXPECT_EQ(w.grad().to_vector<float>(), (std::vector<float>{6, 6}));
  EXPECT_TRUE(w.grad().is_same(first)) << "accumulation must be in place";
  w.clear_grad();
  EXPECT_FALSE(w.grad().defined());
  sum(w).backward();
  EXPECT_EQ(w.grad().to_vector<float>(), (std::vector<float>{1, 1}));
  w.clear_grad(true);
  EXPECT_EQ(w.grad().to_vector<float>(), (std::vector<float>{0, 0}));
}

// clear_grad(true) on a gradient nobody else holds defers its zeros: the next backward's
// fresh gradient replaces it (no fill, no addition into zeros); a read sees the zeros; a
// gradient someone holds is zeroed at once and accumulated into.
TEST(EngineTest, ZeroedGradientIsReplacedByTheNextBackwardUnlessHeld) {
  Tensor w = param({1, 2}, {2});
  sum(mul(w, 3.0)).backward();
  const void* old_bytes = w.grad().raw_data();
  w.clear_grad(true);
  sum(mul(w, 2.0)).backward();
  EXPECT_EQ(w.grad().to_vector<float>(), (std::vector<float>{2, 2}));
  EXPECT_NE(w.grad().raw_data(), old_bytes) << "the fresh gradient was added into written zeros";
  w.clear_grad(true);
  EXPECT_EQ(w.grad().to_vector<float>(), (std::vector<float>{0, 0}));  // read: the zeros are written
  sum(w).backward();
  EXPECT_EQ(w.grad().to_vector<float>(), (std::vector<float>{1, 1}));
  const Tensor held = w.grad();
  w.clear_grad(true);
  EXPECT_EQ(held.to_vector<float>(), (std::vector<float>{0, 0}));  // zeroed at once
  sum(mul(w, 5.0)).backward();
  EXPECT_TRUE(w.grad().is_same(held));
  EXPECT_EQ(held.to_vector<float>(), (std::vector<float>{5, 5}));
}

TEST(EngineTest, DiamondGraphSumsBothPaths) {
  Tensor w = param({2}, {1});
  Tensor a = mul(w, 3.0);
  Tensor b = mul(w, w);
  sum(add(a, b)).backward();  // 3 + 2w
  EXPECT_FLOAT_EQ(w.grad().item(), 7.0f);
}

// Contributions are added in place into a buffer only its node's output owns: a gradient
// handed to two edges (an add's backward) or the caller's seed gradient is never written.
TEST(EngineTest, InPlaceAccumulationLeavesSharedGradientsAlone) {
  Tensor x = param({1, 2, 3}, {3});
  Tensor y = mul(x, 2.0);
  Tensor z = add(add(y, y), mul(y, 3.0));  // dz/dy = 1 + 1 + 3, through a shared gradient
  Tensor seed = Tensor::from_vector<float>({1, 10, 100}, {3});
  z.backward(seed);
  EXPECT_EQ(x.grad().to_vector<float>(), (std::vector<float>{10, 100, 1000}));
  EXPECT_EQ(seed.to_vector<float>(), (std::vector<float>{1, 10, 100}));
}

TEST(EngineTest, GraphIsFreedUnlessRetained) {
  Tensor w = param({1, 2}, {2});
  Tensor loss = sum(mul(w, w));
  loss.backward(Tensor::ones({}), true);
  loss.backward(Tensor::ones({}), false);
  EXPECT_EQ(w.grad().to_vector<float>(), (std::vector<float>{4, 8}));
  EXPECT_THROW(loss.backward(), StateError);
}

TEST(EngineTest, StopGradientAndNoGrad) {
  Tensor w = param({1, 2}, {2});
  EXPECT_TRUE(Tensor::zeros({2}).stop_gradient());
  EXPECT_FALSE(w.stop_gradient());
  Tensor y = mul(w, 2.0);
  EXPECT_FALSE(y.stop_gradient());
  EXPECT_FALSE(y.is_leaf());
  EXPECT_TRUE(w.is_leaf());
  {
    NoGradGuard guard;
    EXPECT_FALSE(is_grad_enabled());
    Tensor z = mul(w, 2.0);
    EXPECT_TRUE(z.stop_gradient());
    EXPECT_THROW(sum(z).backward(), StateError);
  }
  EXPECT_TRUE(is_grad_enabled());
  Tensor d = y.detach();
  EXPECT_TRUE(d.stop_gradient());
  EXPECT_TRUE(d.shares_storage(y));
  // Gradient does not flow through the detached branch.
  sum(add(mul(d, w), w)).backward();
  EXPECT_EQ(w.grad().to_vector<float>(), (std::vector<float>{3, 5}));
}

TEST(EngineTest, NonScalarNeedsExplicitGradient) {
  Tensor w = param({1, 2}, {2});
  Tensor y = mul(w, w);
  EXPECT_THROW(y.backward(), ValueError);
  EXPECT_THROW(y.backward(Tensor::ones({3})), ValueError);
  y.backward(Tensor::from_vector<float>({1, 10}, {2}));
  EXPECT_EQ(w.grad().to_vector<float>(), (std::vector<float>{2, 40}));
}

TEST(EngineTest, BackwardOnALeafSetsItsGrad) {
  Tensor w = param({5}, {});
  w.backward();
  EXPECT_FLOAT_EQ(w.grad().item(), 1.0f);
}

TEST(EngineTest, SetGradChecksShape) {
  Tensor w = param({1, 2}, {2});
  EXPECT_THROW(w.set_grad(Tensor::zeros({3})), ValueError);
  w.set_grad(Tensor::ones({2}));
  sum(w).backward();
  EXPECT_EQ(w.grad().to_vector<float>(), (std::vector<float>{2, 2}));
}

TEST(EngineTest, GradDoesNotAliasTheSeedGradient) {
  Tensor w = param({1, 2}, {2});
  Tensor seed = Tensor::from_vector<float>({1, 1}, {2});
  reshape(w, {2}).backward(seed);
  reshape(w, {2}).backward(seed);
  EXPECT_EQ(seed.to_vector<float>(), (std::vector<float>{1, 1})) << "accumulation wrote into the caller's tensor";
  EXPECT_EQ(w.grad().to_vector<float>(), (std::vector<float>{2, 2}));
}

TEST(EngineTest, DeepChainDoesNotRecurse) {
  Tensor w = param({1}, {1});
  Tensor y = w;
  for (int i = 0; i < 20000; ++i) y = add(y, 0.0);
  sum(y).backward();
  EXPECT_FLOAT_EQ(w.grad().item(), 1.0f);
}

TEST(EngineTest, GradModeIsPerThread) {
  NoGradGuard guard;
  bool other_thread_enabled = false;
  std::thread t([&] { other_thread_enabled = is_grad_enabled(); });
  t.join();
  EXPECT_FALSE(is_grad_enabled());
  EXPECT_TRUE(other_thread_enabled);
}

TEST(EngineTest, IndependentGraphsBackwardConcurrently) {
  std::vector<Tensor> ws;
  for (int i = 0; i < 4; ++i) ws.push_back(param({1, 2, 3}, {3}));
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] {
      for (int rep = 0; rep < 50; ++rep) sum(mul(mul(ws[i], ws[i]), static_cast<double>(i + 1))).backward();
    });
  }
  for (auto& t : threads) t.join();
  for (int i = 0; i < 4; ++i) {
    const float k = 50.0f * 2 * (i + 1);
    EXPECT_EQ(ws[i].grad().to_vector<float>(), (std::vector<float>{k, 2 * k, 3 * k})) << i;
  }
}

}  // namespace
}  // namespace crew
