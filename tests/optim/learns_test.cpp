// End to end: layers + autograd + losses + optimizers learn. (In the optim suite because it
// needs crew_optim, which the nn suite does not link.)
#include <gtest/gtest.h>

#include "crew/autograd/autograd.h"
#include "crew/autograd/ops.h"
#include "crew/nn/nn.h"
#include "crew/optim/optim.h"

namespace crew::nn {
namespace {

namespace F = functional;

// Two Gaussian blobs in 2-D, centred at (-1.5, -1.5) (label 0) and (1.5, 1.5) (label 1).
void make_blobs(int64_t n, Tensor* x, Tensor* y) {
  Generator gen(123);
  std::vector<float> xs(static_cast<size_t>(2 * n));
  std::vector<int64_t> ys(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    int64_t label = i % 2;
    double c = label == 0 ? -1.5 : 1.5;
    xs[2 * i] = static_cast<float>(gen.normal(c, 0.5));
    xs[2 * i + 1] = static_cast<float>(gen.normal(c, 0.5));
    ys[i] = label;
  }
  *x = Tensor::from_vector<float>(xs, {n, 2});
  *y = Tensor::from_vector<int64_t>(ys, {n});
}

template <typename Opt, typename Options>
void train_and_check(Options options, int steps) {
  seed(5);
  Sequential net(std::make_shared<Linear>(2, 16), std::make_shared<ReLU>(), std::make_shared<Linear>(16, 2));
  Opt opt(net.parameters(), options);
  Tensor x, y;
  make_blobs(64, &x, &y);
  double first_loss = 0, last_loss = 0;
  for (int s = 0; s < steps; ++s) {
    Tensor loss = F::cross_entropy(net(x), y);
    if (s == 0) first_loss = loss.item();
    last_loss = loss.item();
    loss.backward();
    opt.step();
    opt.clear_grad();
  }
  Tensor acc;
  {
    NoGradGuard no_grad;
    acc = F::accuracy(net(x), y);
  }
  EXPECT_GE(acc.item(), 0.98) << "final loss " << last_loss;
  EXPECT_LT(last_loss, 0.25 * first_loss) << "first " << first_loss << " last " << last_loss;
}

TEST(Learns, TwoLayerNetWithSGD) {
  train_and_check<optim::SGD>(optim::SGDOptions{.learning_rate = 0.2}, 150);
}
TEST(Learns, TwoLayerNetWithMomentum) {
  train_and_check<optim::Momentum>(optim::MomentumOptions{.learning_rate = 0.05}, 100);
}
TEST(Learns, TwoLayerNetWithAdam) {
  train_and_check<optim::Adam>(optim::AdamOptions{.learning_rate = 0.02}, 100);
}
TEST(Learns, TwoLayerNetWithAdamW) {
  train_and_check<optim::AdamW>(optim::AdamWOptions{.learning_rate = 0.02}, 100);
}

TEST(Learns, MyNetOverfitsASmallBatch) {
  seed(9);
  models::MyNet net(4, 1, 28);
  optim::Adam opt(net.named_parameters(), {.learning_rate = 3e-3});
  Tensor x = uniform({8, 1, 28, 28}, 0, 1);
  Tensor y = Tensor::from_vector<int64_t>({0, 1, 2, 3, 0, 1, 2, 3});
  double first = 0, last = 0;
  for (int s = 0; s < 10; ++s) {
    Tensor loss = F::cross_entropy(net(x), y);
    if (s == 0) first = loss.item();
    last = loss.item();
    loss.backward();
    opt.step();
    opt.clear_grad();
  }
  EXPECT_LT(last, 0.5 * first) << "first " << first << " last " << last;
  EXPECT_EQ(opt.step_count(), 10);
}

}  // namespace
}  // namespace crew::nn
