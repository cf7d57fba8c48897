// Convolution weights kept in oneDNN's blocked layout across steps (Conv2dParams::
// keep_weight_layout, detail::adopt_layout; docs/kernels.md "Weights kept blocked"): training
// gives bit for bit what it gives when every weight is converted back to row-major before each
// forward, the weights and the optimizer's state really stay blocked, and reading a weight
// mid-training (row-major, converted in place) changes nothing.
#include <gtest/gtest.h>

#include <functional>
#include <memory>

#include "crew/autograd/autograd.h"
#include "crew/autograd/ops.h"
#include "crew/nn/nn.h"
#include "crew/optim/optim.h"
#include "crew/tensor/random.h"

namespace crew::nn {
namespace {

namespace F = functional;

Tensor param(const Shape& shape, uint64_t seed) {
  Generator gen(seed);
  return normal(shape, 0.0, 0.1, DType::FLOAT32, &gen).set_stop_gradient(false);
}

// conv -> relu -> conv -> residual add -> relu -> conv, a loss over its output.
struct SmallNet {
  Tensor w1 = param({16, 8, 3, 3}, 1), w2 = param({16, 16, 3, 3}, 2), w3 = param({32, 16, 1, 1}, 3);
  Tensor b1 = param({16}, 4);
  std::vector<Tensor> params() const { return {w1, w2, w3, b1}; }
  Tensor loss(const Tensor& x) const {
    Tensor h = F::relu(F::conv2d(x, w1, b1, {1, 1}, {1, 1}));
    Tensor r = F::relu(F::conv2d(h, w2, Tensor(), {1, 1}, {1, 1}) + h);
    Tensor y = F::conv2d(r, w3, Tensor());
    return mean(y * y);
  }
};

using MakeOptimizer = std::function<std::unique_ptr<optim::Optimizer>(std::vector<Tensor>)>;

struct Trained {
  std::vector<std::vector<float>> params;
  bool weights_blocked = true;  // every conv weight blocked before each forward from step 2 on
};

// `steps` steps; plain: every weight read row-major (converted in place) before each forward;
// peek: one weight read row-major once, mid-training.
Trained train(const MakeOptimizer& make, int steps, bool plain, bool peek = false) {
  SmallNet net;
  auto opt = make(net.params());
  Generator gen(7);
  const Tensor x = normal({4, 8, 10, 10}, 0.0, 1.0, DType::FLOAT32, &gen);
  Trained t;
  for (int s = 0; s < steps; ++s) {
    for (const Tensor& w : {net.w1, net.w2, net.w3}) {
      if (plain) (void)w.data<float>();
      if (s > 0 && !plain) t.weights_blocked = t.weights_blocked && w.layout() != nullptr;
    }
    if (peek && s == steps / 2) (void)net.w2.to_vector<float>();
    net.loss(x).backward();
    opt->step();
    opt->clear_grad();
  }
  for (const Tensor& p : net.params()) t.params.push_back(p.to_vector<float>());
  return t;
}

void expect_same_training(const MakeOptimizer& make) {
  const Trained kept = train(make, 4, false);
  const Trained plain = train(make, 4, true);
  EXPECT_TRUE(kept.weights_blocked) << "a convolution weight went back to row-major between steps";
  ASSERT_EQ(kept.params.size(), plain.params.size());
  for (size_t i = 0; i < kept.params.size(); ++i)
    EXPECT_EQ(kept.params[i], plain.params[i]) << "parameter " << i;
  EXPECT_EQ(train(make, 4, false, true).params, plain.params) << "reading a weight mid-training";
}

TEST(WeightLayout, MomentumTrainsBitIdentically) {
  expect_same_training([](std::vector<Tensor> p) {
    return std::make_unique<optim::Momentum>(std::move(p), optim::MomentumOptions{.learning_rate = 0.05});
  });
}

TEST(WeightLayout, NesterovWithWeightDecayTrainsBitIdentically) {
  expect_same_training([](std::vector<Tensor> p) {
    return std::make_unique<optim::Momentum>(
        std::move(p),
        optim::MomentumOptions{.learning_rate = 0.05, .use_nesterov = true, .weight_decay = 1e-3});
  });
}

TEST(WeightLayout, AdamTrainsBitIdentically) {
  expect_same_training([](std::vector<Tensor> p) {
    return std::make_unique<optim::Adam>(std::move(p), optim::AdamOptions{.learning_rate = 0.01});
  });
}

TEST(WeightLayout, SgdWithGlobalNormClipTrainsBitIdentically) {
  expect_same_training([](std::vector<Tensor> p) {
    return std::make_unique<optim::SGD>(
        std::move(p), optim::SGDOptions{.learning_rate = 0.1,
                                        .grad_clip = std::make_shared<optim::ClipGradByGlobalNorm>(0.01)});
  });
}

// The optimizer's state, kept in its parameter's layout, saves the same values as when
// everything stays row-major.
TEST(WeightLayout, OptimizerStateSavesTheSameValues) {
  auto state_after_two_steps = [](bool plain) {
    SmallNet net;
    optim::Momentum opt(net.params(), {.learning_rate = 0.05});
    Generator gen(7);
    const Tensor x = normal({4, 8, 10, 10}, 0.0, 1.0, DType::FLOAT32, &gen);
    for (int s = 0; s < 2; ++s) {
      if (plain) (void)net.w2.data<float>();
      net.loss(x).backward();
      opt.step();
      opt.clear_grad();
    }
    if (!plain) EXPECT_NE(net.w2.layout(), nullptr);
    std::vector<std::pair<std::string, std::vector<float>>> out;
    const StateDict sd = opt.state_dict();
    for (const std::string& key : sd.keys()) {
      const Tensor& t = sd.at(key);
      if (t.dtype() == DType::FLOAT32) out.emplace_back(key, t.to_vector<float>());
    }
    return out;
  };
  const auto kept = state_after_two_steps(false);
  EXPECT_FALSE(kept.empty());
  EXPECT_EQ(kept, state_after_two_steps(true));
}

}  // namespace
}  // namespace crew::nn
