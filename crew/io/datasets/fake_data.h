#pragma once
// FakeData: `size` random images with labels, as torchvision's FakeData, for measuring a
// model's speed without its data set. Sample i is the same on every call and every rank
// (drawn from a generator seeded by (seed, i)): {transform(image uint8 [H, W, C]),
// label int64 []} with label in [0, num_classes). Without a transform the image stays uint8
// HWC, the layout Cifar10::get hands its transform, so ToTensor makes it [C, H, W] float32.
//
//   crew::io::FakeData fake({.size = 2048, .transform = std::make_shared<ToTensor>()});
#include <cstdint>

#include "crew/io/dataset.h"
#include "crew/io/transforms/transform.h"

namespace crew::io {

struct FakeDataOptions {
  int64_t size = 1000;
  int64_t channels = 3, height = 32, width = 32;
  int64_t num_classes = 10;
  uint64_t seed = 0;
  TransformPtr transform;
};

class FakeData : public Dataset {
 public:
  explicit FakeData(FakeDataOptions options = {});
  int64_t size() const override { return options_.size; }
  Sample get(int64_t index) const override;

 private:
  FakeDataOptions options_;
};

}  // namespace crew::io
