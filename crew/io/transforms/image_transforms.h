#pragma once
// Deterministic image transforms: ToTensor and Normalize (paddle.vision.transforms).
#include <vector>

#include "crew/io/transforms/transform.h"

namespace crew::io {

// uint8 [H, W] or [H, W, C] -> float32 [C, H, W] scaled to [0, 1] (x / 255), as Paddle's
// ToTensor. A floating [H, W, C] or [H, W] image is transposed without scaling.
class ToTensor : public Transform {
 public:
  Tensor operator()(const Tensor& image) const override;
};

// Floating [C, H, W]: out[c] = (x[c] - mean[c]) / std[c]. mean/std have C entries, or one
// entry used for every channel.
class Normalize : public Transform {
 public:
  Normalize(std::vector<float> mean, std::vector<float> std);
  Tensor operator()(const Tensor& image) const override;

 private:
  std::vector<float> mean_, std_;
};

}  // namespace crew::io
