#pragma once
// Seeded random augmentations: RandomCrop, RandomHorizontalFlip and RandomVerticalFlip
// (paddle.vision.transforms).
// They accept uint8 [H, W] / [H, W, C] and floating [C, H, W] images and keep the layout.
#include <cstdint>
#include <optional>

#include "crew/io/transforms/transform.h"

namespace crew::io {

// Pads every side by `padding` (with `fill`), then crops a random height x width window.
class RandomCrop : public RandomTransform {
 public:
  RandomCrop(int64_t height, int64_t width, int64_t padding = 0, double fill = 0.0,
             std::optional<uint64_t> seed = std::nullopt);
  Tensor operator()(const Tensor& image) const override;

 private:
  int64_t height_, width_, padding_;
  double fill_;
};

// Mirrors the image left-right with probability p.
class RandomHorizontalFlip : public RandomTransform {
 public:
  explicit RandomHorizontalFlip(double p = 0.5, std::optional<uint64_t> seed = std::nullopt);
  Tensor operator()(const Tensor& image) const override;

 private:
  double p_;
};

// Mirrors the image top-bottom with probability p.
class RandomVerticalFlip : public RandomTransform {
 public:
  explicit RandomVerticalFlip(double p = 0.5, std::optional<uint64_t> seed = std::nullopt);
  Tensor operator()(const Tensor& image) const override;

 private:
  double p_;
};

}  // namespace crew::io
