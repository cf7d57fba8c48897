// ResNet-18/34 with BasicBlocks (Paddle's paddle.vision.models.ResNet).
#include "crew/nn/models/resnet.h"

#include "crew/autograd/ops.h"
#include "crew/core/check.h"
#include "crew/nn/functional.h"

namespace crew::nn::models {
namespace F = functional;

namespace {

std::shared_ptr<Conv2D> conv_no_bias(int64_t in, int64_t out, int64_t k, int64_t stride, int64_t pad) {
  return std::make_shared<Conv2D>(in, out, k, Conv2DOptions{.stride = stride, .padding = pad, .bias = false});
}

}  // namespace

BasicBlock::BasicBlock(int64_t in_channels, int64_t channels, int64_t stride,
                       std::shared_ptr<Sequential> downsample)
    : Layer("basic_block") {
  conv1_ = register_sublayer("conv1", conv_no_bias(in_channels, channels, 3, stride, 1));
  bn1_ = register_sublayer("bn1", std::make_shared<BatchNorm2D>(channels));
  conv2_ = register_sublayer("conv2", conv_no_bias(channels, channels, 3, 1, 1));
  bn2_ = register_sublayer("bn2", std::make_shared<BatchNorm2D>(channels));
  if (downsample) downsample_ = register_sublayer("downsample", std::move(downsample));
}

Tensor BasicBlock::forward(const Tensor& x) {
  Tensor out = F::relu((*bn1_)((*conv1_)(x)));
  out = (*bn2_)((*conv2_)(out));
  Tensor identity = downsample_ ? (*downsample_)(x) : x;
  return F::relu(out + identity);
}

ResNet::ResNet(int depth, int64_t num_classes, bool with_pool) : Layer("resnet"), num_classes_(num_classes) {
  CREW_CHECK(depth == 18 || depth == 34, "ResNet: depth must be 18 or 34 (BasicBlock), got ", depth);
  const std::vector<int> blocks = depth == 18 ? std::vector<int>{2, 2, 2, 2} : std::vector<int>{3, 4, 6, 3};
  conv1_ = register_sublayer("conv1", conv_no_bias(3, 64, 7, 2, 3));
  bn1_ = register_sublayer("bn1", std::make_shared<BatchNorm2D>(64));
  maxpool_ = register_sublayer("maxpool", std::make_shared<MaxPool2D>(3, 2, 1));
  const int64_t widths[4] = {64, 128, 256, 512};
  for (int i = 0; i < 4; ++i) {
    auto layer = make_layer(widths[i], blocks[i], i == 0 ? 1 : 2);
    layers_.push_back(register_sublayer("layer" + std::to_string(i + 1), layer));
  }
  if (with_pool) avgpool_ = register_sublayer("avgpool", std::make_shared<AdaptiveAvgPool2D>(1));
  if (num_classes > 0) {
    CREW_CHECK(with_pool, "ResNet: a classifier (num_classes ", num_classes, ") needs with_pool");
    fc_ = register_sublayer("fc", std::make_shared<Linear>(512 * BasicBlock::expansion, num_classes));
  }
}

std::shared_ptr<Sequential> ResNet::make_layer(int64_t channels, int blocks, int64_t stride) {
  std::shared_ptr<Sequential> downsample;
  if (stride != 1 || in_channels_ != channels * BasicBlock::expansion) {
    downsample = std::make_shared<Sequential>(conv_no_bias(in_channels_, channels, 1, stride, 0),
                                              std::make_shared<BatchNorm2D>(channels));
  }
  auto layer = std::make_shared<Sequential>();
  layer->append(std::make_shared<BasicBlock>(in_channels_, channels, stride, downsample));
  in_channels_ = channels * BasicBlock::expansion;
  for (int i = 1; i < blocks; ++i)
    layer->append(std::make_shared<BasicBlock>(in_channels_, channels, 1, nullptr));
  return layer;
}

Tensor ResNet::forward(const Tensor& x) {
  CREW_CHECK(x.dim() == 4 && x.size(1) == 3, full_name(), ": expected input [N, 3, H, W], got ",
             shape_str(x.shape()));
  Tensor h = (*maxpool_)(F::relu((*bn1_)((*conv1_)(x))));
  for (auto& layer : layers_) h = (*layer)(h);
  if (avgpool_) h = (*avgpool_)(h);
  if (fc_) h = (*fc_)(F::flatten(h, 1));
  return h;
}

std::shared_ptr<ResNet> resnet18(int64_t num_classes) { return std::make_shared<ResNet>(18, num_classes); }
std::shared_ptr<ResNet> resnet34(int64_t num_classes) { return std::make_shared<ResNet>(34, num_classes); }

}  // namespace crew::nn::models
