// Grad-ready hooks (once per pass, after the gradient is complete, reverse use order),
// gradient hooks (Tensor.register_hook) and reachable_leaves.
#include <gtest/gtest.h>

#include <string>
#include <thread>

#include "crew/autograd/autograd.h"
#include "crew/autograd/ops.h"

namespace crew {
namespace {

Tensor param(std::vector<float> v, Shape s) { return Tensor::from_vector(v, s).set_stop_gradient(false); }

TEST(HooksTest, FiresOncePerPassWithTheCompleteGradient) {
  Tensor w = param({1, 2}, {2});
  std::vector<std::vector<float>> seen;
  autograd::register_grad_ready_hook(w, [&](const Tensor& leaf) {
    EXPECT_TRUE(leaf.is_same(w));
    seen.push_back(leaf.grad().to_vector<float>());
  });
  // w is used three times; the hook must see the sum of all three contributions.
  Tensor loss = sum(add(add(mul(w, 2.0), mul(w, w)), w));
  loss.backward();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0], (std::vector<float>{5, 7}));  // 2 + 2w + 1
  sum(w).backward();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[1], (std::vector<float>{6, 8}));  // accumulated
}

TEST(HooksTest, OrderIsReverseOfUseInForward) {
  Tensor w1 = param({1}, {1});
  Tensor w2 = param({1}, {1});
  Tensor w3 = param({1}, {1});
  std::string order;
  autograd::register_grad_ready_hook(w1, [&](const Tensor&) { order += "1"; });
  autograd::register_grad_ready_hook(w2, [&](const Tensor&) { order += "2"; });
  autograd::register_grad_ready_hook(w3, [&](const Tensor&) { order += "3"; });
  Tensor x = Tensor::ones({1});
  Tensor h = mul(x, w1);
  h = mul(h, w2);
  h = mul(h, w3);
  sum(h).backward();
  EXPECT_EQ(order, "321");
}

TEST(HooksTest, RunsOnTheBackwardThreadAndCanBeRemoved) {
  Tensor w = param({1}, {1});
  std::thread::id hook_thread;
  int calls = 0;
  const autograd::HookId id = autograd::register_grad_ready_hook(w, [&](const Tensor&) {
    hook_thread = std::this_thread::get_id();
    ++calls;
  });
  std::thread t([&] { sum(mul(w, 2.0)).backward(); });
  const std::thread::id backward_thread = t.get_id();
  t.join();
  EXPECT_EQ(hook_thread, backward_thread);
  autograd::remove_grad_ready_hook(w, id);
  sum(w).backward();
  EXPECT_EQ(calls, 1);
}

TEST(HooksTest, UnusedLeafHookDoesNotFire) {
  Tensor used = param({1}, {1});
  Tensor unused = param({1}, {1});
  int fired = 0;
  autograd::register_grad_ready_hook(unused, [&](const Tensor&) { ++fired; });
  sum(mul(used, 2.0)).backward();
  EXPECT_EQ(fired, 0);
  EXPECT_FALSE(unused.grad().defined());
}

TEST(HooksTest, RegisteringOnANonLeafIsAnError) {
  Tensor w = param({1}, {1});
  EXPECT_THROW(autograd::register_grad_ready_hook(mul(w, 2.0), [](const Tensor&) {}), ValueError);
  EXPECT_THROW(autograd::register_grad_ready_hook(Tensor::ones({1}), [](const Tensor&) {}), ValueError);
}

TEST(GradHooksTest, ANonLeafHookSeesAndReplacesTheGradientFlowingOn) {
  Tensor w = param({1, 2}, {2});
  Tensor h = mul(w, 3.0);  // dh/dw = 3
  std::vector<float> seen;
  autograd::register_grad_hook(h, [&](const Tensor& g) {
    seen = g.to_vector<float>();
    return mul(g, 2.0);  // doubles what reaches w
  });
  sum(mul(h, h)).backward();  // d/dh = 2h = {6, 12}
  EXPECT_EQ(seen, (std::vector<float>{6, 12}));
  EXPECT_EQ(w.grad().to_vector<float>(), (std::vector<float>{36, 72}));  // 2 * {6, 12} * 3
}

TEST(GradHooksTest, ALeafHookChangesWhatIsAccumulatedAndCanBeRemoved) {
  Tensor w = param({1, 2}, {2});
  int calls = 0;
  const autograd::HookId id = autograd::register_grad_hook(w, [&](const Tensor& g) {
    ++calls;
    return mul(g, 10.0);
  });
  const autograd::HookId keep = autograd::register_grad_hook(w, [&](const Tensor&) { return Tensor(); });
  sum(add(w, w)).backward();  // both contributions summed first, then the hook once
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(w.grad().to_vector<float>(), (std::vector<float>{20, 20}));
  autograd::remove_grad_hook(w, id);
  autograd::remove_grad_hook(w, keep);
  sum(w).backward();
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(w.grad().to_vector<float>(), (std::vector<float>{21, 21}));
}

TEST(GradHooksTest, AWrongShapeOrAStopGradientTensorIsAnError) {
  Tensor w = param({1, 2}, {2});
  Tensor h = mul(w, 2.0);
  autograd::register_grad_hook(h, [](const Tensor&) { return Tensor::zeros({3}, DType::FLOAT32); });
  EXPECT_THROW(sum(h).backward(), ValueError);
  EXPECT_THROW(autograd::register_grad_hook(Tensor::zeros({2}, DType::FLOAT32), [](const Tensor& g) { return g; }),
               ValueError);
}

TEST(ReachableLeavesTest, FindsExactlyTheLeavesInTheGraph) {
  Tensor a = param({1}, {1});
  Tensor b = param({1}, {1});
  Tensor c = param({1}, {1});
  Tensor frozen = Tensor::ones({1});
  Tensor y = add(mul(a, frozen), mul(b, a));
  std::vector<Tensor> leaves = autograd::reachable_leaves({y});
  ASSERT_EQ(leaves.size(), 2u);
  auto contains = [&](const Tensor& t) {
    for (const Tensor& l : leaves) {
      if (l.is_same(t)) return true;
    }
    return false;
  };
  EXPECT_TRUE(contains(a));
  EXPECT_TRUE(contains(b));
  EXPECT_FALSE(contains(c));
  EXPECT_EQ(autograd::reachable_leaves({c}).size(), 1u);
  EXPECT_TRUE(autograd::reachable_leaves({frozen}).empty());
}

}  // namespace
}  // namespace crew
