// Layer forward passes: output shapes, the Paddle weight layout, and mode-dependent layers.
#include <gtest/gtest.h>

#include <cmath>

#include "crew/nn/nn.h"

namespace crew::nn {
namespace {

TEST(Conv2D, OutputShapes) {
  Tensor x = uniform({2, 3, 11, 9}, -1, 1);
  EXPECT_EQ(Conv2D(3, 8, 3)(x).shape(), (Shape{2, 8, 9, 7}));
  EXPECT_EQ(Conv2D(3, 8, 3, {.stride = 2, .padding = 1})(x).shape(), (Shape{2, 8, 6, 5}));
  EXPECT_EQ(Conv2D(3, 4, {3, 1}, {.dilation = 2})(x).shape(), (Shape{2, 4, 7, 9}));
  EXPECT_EQ(Conv2D(3, 6, 1, {.groups = 3})(x).shape(), (Shape{2, 6, 11, 9}));
  EXPECT_THROW(Conv2D(3, 8, 3)(uniform({2, 4, 8, 8}, 0, 1)), ValueError);
  EXPECT_THROW(Conv2D(3, 8, 3, {.groups = 2}), ValueError);
  EXPECT_THROW(Conv2D(3, 8, 0), ValueError);
}

TEST(Conv2D, BiasIsAddedPerChannel) {
  Conv2D conv(1, 2, 1);
  conv.weight().fill_(0);
  Tensor b = conv.bias();
  b.copy_(Tensor::from_vector<float>({1.5f, -2.0f}));
  Tensor y = conv(Tensor::ones({1, 1, 2, 2}));
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{1.5f, 1.5f, 1.5f, 1.5f, -2, -2, -2, -2}));
}

TEST(Pooling, ShapesAndValues) {
  Tensor x = Tensor::arange(16, DType::FLOAT32).view({1, 1, 4, 4});
  MaxPool2D mp(2);
  EXPECT_EQ(mp.stride(), Size2(2));
  EXPECT_EQ(mp(x).to_vector<float>(), (std::vector<float>{5, 7, 13, 15}));
  AvgPool2D ap(2, 2);
  EXPECT_EQ(ap(x).to_vector<float>(), (std::vector<float>{2.5f, 4.5f, 10.5f, 12.5f}));
  EXPECT_EQ(MaxPool2D(3, 1, 1)(x).shape(), (Shape{1, 1, 4, 4}));
  EXPECT_EQ(MaxPool2D(2, 2)(uniform({2, 3, 13, 13}, 0, 1)).shape(), (Shape{2, 3, 6, 6}));
  EXPECT_THROW(MaxPool2D(2, 1, 2), ValueError);
  EXPECT_THROW(mp(Tensor::ones({4, 4})), ValueError);
}

TEST(Linear, UsesPaddleLayoutInOut) {
  Linear fc(3, 2);
  Tensor w = fc.weight();
  w.copy_(Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, {3, 2}));  // [in=3, out=2]
  Tensor b = fc.bias();
  b.copy_(Tensor::from_vector<float>({0.5f, -0.5f}));
  Tensor y = fc(Tensor::from_vector<float>({1, 0, -1, 2, 1, 0}, {2, 3}));
  // row 0: [1,0,-1] @ W = [1-5, 2-6] = [-4, -4]; row 1: [2,1,0] @ W = [2+3, 4+4] = [5, 8]
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{-3.5f, -4.5f, 5.5f, 7.5f}));
  EXPECT_THROW(fc(Tensor::ones({2, 4})), ValueError);
}

TEST(Activations, ReLUSigmoidTanhSoftmax) {
  Tensor x = Tensor::from_vector<float>({-1, 0, 2});
  EXPECT_EQ(ReLU()(x).to_vector<float>(), (std::vector<float>{0, 0, 2}));
  EXPECT_NEAR(Sigmoid()(x).to_vector<float>()[2], 1 / (1 + std::exp(-2.0)), 1e-6);
  EXPECT_NEAR(Tanh()(x).to_vector<float>()[0], std::tanh(-1.0), 1e-6);
  std::vector<float> s = Softmax()(x).to_vector<float>();
  EXPECT_NEAR(s[0] + s[1] + s[2], 1.0, 1e-6);
  EXPECT_NEAR(GELU()(x).to_vector<float>()[1], 0.0, 1e-7);
}

TEST(Flatten, DefaultAndCustomAxes) {
  Tensor x = Tensor::zeros({2, 3, 4, 5});
  EXPECT_EQ(Flatten()(x).shape(), (Shape{2, 60}));
  EXPECT_EQ(Flatten(1, 2)(x).shape(), (Shape{2, 12, 5}));
  EXPECT_EQ(Flatten(0, -1).output_shape(x.shape()), (Shape{120}));
  EXPECT_THROW(Flatten(2, 1)(x), ValueError);
}

TEST(Dropout, TrainScalesAndEvalIsIdentity) {
  Dropout d(0.25);
  Tensor x = Tensor::ones({4000});
  std::vector<float> y = d(x).to_vector<float>();
  int zeros = 0;
  for (float v : y) {
    if (v == 0.0f) {
      ++zeros;
    } else {
      EXPECT_NEAR(v, 1.0 / 0.75, 1e-6);
    }
  }
  EXPECT_GT(zeros, 800);  // expected 1000; far outside any plausible fluctuation
  EXPECT_LT(zeros, 1200);
  d.eval();
  EXPECT_EQ(d(x).to_vector<float>(), x.to_vector<float>());
  EXPECT_THROW(Dropout(1.5), ValueError);
}

TEST(BatchNorm2D, TrainUpdatesRunningStatsEvalUsesThem) {
  BatchNorm2D bn(2);
  // Channel 0 holds 1..4, channel 1 holds 10 everywhere (N = 1, 2x2).
  Tensor x = Tensor::from_vector<float>({1, 2, 3, 4, 10, 10, 10, 10}, {1, 2, 2, 2});
  std::vector<float> y = bn(x).to_vector<float>();
  double var0 = 1.25;  // population variance of 1..4
  EXPECT_NEAR(y[0], (1 - 2.5) / std::sqrt(var0 + 1e-5), 1e-4);
  EXPECT_NEAR(y[4], 0.0, 1e-4);
  std::vector<float> mean = bn.running_mean().to_vector<float>();
  EXPECT_NEAR(mean[0], 0.1 * 2.5, 1e-5);  // 0.9 * 0 + 0.1 * 2.5
  EXPECT_NEAR(mean[1], 0.1 * 10, 1e-5);
  bn.eval();
  Tensor before = bn.running_mean().clone();
  std::vector<float> z = bn(x).to_vector<float>();
  EXPECT_EQ(bn.running_mean().to_vector<float>(), before.to_vector<float>());
  double rv0 = bn.running_variance().to_vector<float>()[0];
  EXPECT_NEAR(z[0], (1 - mean[0]) / std::sqrt(rv0 + 1e-5), 1e-4);
  EXPECT_THROW(bn(Tensor::ones({1, 3, 2, 2})), ValueError);
}

TEST(Sequential, RunsInOrderWithIndexNames) {
  auto seq = std::make_shared<Sequential>(std::make_shared<Linear>(4, 3), std::make_shared<ReLU>(),
                                          std::make_shared<Linear>(3, 2));
  EXPECT_EQ(seq->state_dict().keys(), (std::vector<std::string>{"0.weight", "0.bias", "2.weight", "2.bias"}));
  EXPECT_EQ((*seq)(Tensor::ones({5, 4})).shape(), (Shape{5, 2}));
  seq->append(std::make_shared<Flatten>());
  EXPECT_EQ(seq->named_children().back().first, "3");
}

}  // namespace
}  // namespace crew::nn
