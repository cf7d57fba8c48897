#pragma once
// ResNet with BasicBlocks, layer for layer as Paddle's
// paddle.vision.models.ResNet (resnet18 / resnet34), so state_dict keys and
// layouts are Paddle's:
//   conv1 (7x7/2, pad 3, no bias) -> bn1 -> relu -> maxpool (3/2, pad 1)
//   layer1..layer4: BasicBlocks of widths 64/128/256/512; the first block of
//   layers 2-4 has stride 2 and downsample = Sequential(conv 1x1/2 no bias,
//   BatchNorm2D) avgpool (AdaptiveAvgPool2D(1)) -> flatten -> fc Linear(512,
//   num_classes) (weight [in, out])
// BasicBlock: conv1 3x3 (stride s) -> bn1 -> relu -> conv2 3x3 -> bn2 -> +
// identity/downsample
// -> relu. Keys: conv1.weight, bn1.{weight,bias,_mean,_variance},
// layer1.0.conv1.weight, layer2.0.downsample.0.weight,
// layer2.0.downsample.1._mean, ..., fc.weight, fc.bias. resnet18(10) has
// 11,181,642 parameters.
//
//   auto net = crew::nn::models::resnet18(/*num_classes=*/10);
//   Tensor logits = (*net)(images);          // [N, 3, H, W] -> [N, 10]
#include <cstdint>
#include <memory>
#include <vector>

#include "crew/nn/batch_norm.h"
#include "crew/nn/conv.h"
#include "crew/nn/layer.h"
#include "crew/nn/linear.h"
#include "crew/nn/pooling.h"
#include "crew/nn/sequential.h"

namespace crew::nn::models {

class BasicBlock : public Layer {
 public:
  static constexpr int64_t expansion = 1;
  // downsample: applied to the input for the residual (null: identity).
  BasicBlock(int64_t in_channels, int64_t channels, int64_t stride, std::shared_ptr<Sequential> downsample);
  Tensor forward(const Tensor& x) override;

 private:
  std::shared_ptr<Conv2D> conv1_, conv2_;
  std::shared_ptr<BatchNorm2D> bn1_, bn2_;
  std::shared_ptr<Sequential> downsample_;
};

class ResNet : public Layer {
 public:
  // depth 18 or 34 (BasicBlock depths). with_pool false leaves out avgpool (and
  // the caller gets the feature map when num_classes <= 0, as Paddle's).
  explicit ResNet(int depth = 18, int64_t num_classes = 1000, bool with_pool = true);
  Tensor forward(const Tensor& x) override;
  int64_t num_classes() const { return num_classes_; }

 private:
  std::shared_ptr<Sequential> make_layer(int64_t channels, int blocks, int64_t stride);

  int64_t num_classes_;
  int64_t in_channels_ = 64;
  std::shared_ptr<Conv2D> conv1_;
  std::shared_ptr<BatchNorm2D> bn1_;
  std::shared_ptr<MaxPool2D> maxpool_;
  std::vector<std::shared_ptr<Sequential>> layers_;
  std::shared_ptr<AdaptiveAvgPool2D> avgpool_;
  std::shared_ptr<Linear> fc_;
};

std::shared_ptr<ResNet> resnet18(int64_t num_classes = 1000);
std::shared_ptr<ResNet> resnet34(int64_t num_classes = 1000);

}  // namespace crew::nn::models
