#pragma once
// Flatten: Paddle's nn.Flatten(start_axis=1, stop_axis=-1). Merges axes start..stop:
// [N, C, H, W] -> [N, C*H*W] by default.
#include <cstdint>

#include "crew/nn/layer.h"

namespace crew::nn {

class Flatten : public Layer {
 public:
  explicit Flatten(int64_t start_axis = 1, int64_t stop_axis = -1)
      : Layer("flatten"), start_axis_(start_axis), stop_axis_(stop_axis) {}
  Tensor forward(const Tensor& x) override;
  // The output shape for an input shape (ValueError / IndexError for bad axes).
  Shape output_shape(const Shape& input) const;

 private:
  int64_t start_axis_;
  int64_t stop_axis_;
};

}  // namespace crew::nn
