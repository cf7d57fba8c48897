#pragma once
// MyNet: the seed's CNN (the DistributedBatchSampler demo), layer for layer:
//   conv1 (in -> 32, 3x3) -> relu -> pool1 (max 2x2, stride 2)
//   conv2 (32 -> 64, 3x3) -> relu -> pool2 (max 2x2, stride 2)
//   conv3 (64 -> 64, 3x3) -> relu -> flatten -> linear1 (flat -> 64) -> relu
//   -> linear2 (64 -> num_classes)
// x [N, in_channels, image_size, image_size] -> logits [N, num_classes]. The flattened size
// follows the input: 576 for 1x28x28 (Fashion-MNIST), 1024 for 3x32x32 (the seed's CIFAR-10).
// state_dict keys: conv1.weight, conv1.bias, conv2.*, conv3.*, linear1.*, linear2.*.
#include <cstdint>
#include <memory>

#include "crew/nn/conv.h"
#include "crew/nn/flatten.h"
#include "crew/nn/layer.h"
#include "crew/nn/linear.h"
#include "crew/nn/pooling.h"

namespace crew::nn::models {

class MyNet : public Layer {
 public:
  explicit MyNet(int64_t num_classes = 10, int64_t in_channels = 1, int64_t image_size = 28);
  Tensor forward(const Tensor& x) override;

  // 64 * s * s, s the spatial size after conv3 (576 for 28, 1024 for 32).
  static int64_t flat_features(int64_t image_size);
  int64_t num_classes() const { return num_classes_; }

 private:
  int64_t num_classes_;
  int64_t in_channels_;
  int64_t image_size_;
  std::shared_ptr<Conv2D> conv1_, conv2_, conv3_;
  std::shared_ptr<MaxPool2D> pool1_, pool2_;
  std::shared_ptr<Flatten> flatten_;
  std::shared_ptr<Linear> linear1_, linear2_;
};

}  // namespace crew::nn::models
