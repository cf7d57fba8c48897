// ResNet-18 as Paddle's resnet18: parameter count, state_dict keys and shapes,
// forward shapes.
#include "crew/nn/models/resnet.h"

#include <gtest/gtest.h>

#include <set>

#include "crew/autograd/autograd.h"
#include "crew/nn/functional.h"
#include "crew/tensor/random.h"

namespace crew::nn::models {
namespace {

int64_t count(const std::vector<Tensor>& params) {
  int64_t n = 0;
  for (const auto& p : params) n += p.numel();
  return n;
}

TEST(ResNet, Resnet18HasPaddlesParameterCountAndKeys) {
  auto net = resnet18(10);
  EXPECT_EQ(count(net->parameters()), 11181642);
  StateDict sd = net->state_dict();
  const std::pair<const char*, Shape> expected[] = {
      {"conv1.weight", {64, 3, 7, 7}},
      {"bn1.weight", {64}},
      {"bn1._mean", {64}},
      {"bn1._variance", {64}},
      {"layer1.0.conv1.weight", {64, 64, 3, 3}},
      {"layer1.1.bn2.bias", {64}},
      {"layer2.0.conv1.weight", {128, 64, 3, 3}},
      {"layer2.0.downsample.0.weight", {128, 64, 1, 1}},
      {"layer2.0.downsample.1._mean", {128}},
      {"layer4.1.conv2.weight", {512, 512, 3, 3}},
      {"fc.weight", {512, 10}},
      {"fc.bias", {10}},
  };
  for (const auto& [key, shape] : expected) {
    ASSERT_TRUE(sd.contains(key)) << key;
    EXPECT_EQ(sd.at(key).shape(), shape) << key;
  }
  EXPECT_FALSE(sd.contains("layer1.0.downsample.0.weight"));  // layer1 keeps 64 channels, stride 1
  EXPECT_FALSE(sd.contains("conv1.bias"));
  // 20 convs + 1 fc weight/bias; 20 BatchNorms x 4 entries.
  EXPECT_EQ(sd.size(), 20u + 2u + 20u * 4u);
}

TEST(ResNet, ForwardShapesAndBackwardReachEveryParameter) {
  crew::seed(1);
  auto net = resnet18(10);
  Tensor x = crew::uniform({2, 3, 32, 32}, 0.0, 1.0);
  Tensor logits = (*net)(x);
  EXPECT_EQ(logits.shape(), (Shape{2, 10}));
  Tensor loss = functional::cross_entropy(logits, Tensor::from_vector<int64_t>({3, 7}));
  loss.backward();
  for (const auto& [name, p] : net->named_parameters()) {
    ASSERT_TRUE(p.grad().defined()) << name;
  }
  // Other image sizes: the adaptive pool makes the classifier independent of H,
  // W.
  NoGradGuard no_grad;
  EXPECT_EQ((*net)(crew::uniform({1, 3, 64, 48}, 0.0, 1.0)).shape(), (Shape{1, 10}));
  EXPECT_THROW((*net)(crew::uniform({1, 1, 32, 32}, 0.0, 1.0)), ValueError);
}

TEST(ResNet, Resnet34AndBadDepth) {
  EXPECT_EQ(count(resnet34(10)->parameters()), 21289802);
  EXPECT_THROW(ResNet(50), ValueError);
}

}  // namespace
}  // namespace crew::nn::models
