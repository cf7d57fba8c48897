#pragma once
// LayerNorm: Paddle's nn.LayerNorm over the last axis, x [..., C] -> [..., C], with
// parameters weight (ones) and bias (zeros) of shape [C].
//
//   LayerNorm ln(256);
//   Tensor y = ln(x);                 // x [B, T, 256]
#include <cstdint>

#include "crew/nn/layer.h"

namespace crew::nn {

class LayerNorm : public Layer {
 public:
  explicit LayerNorm(int64_t normalized_shape, double epsilon = 1e-5);

  Tensor forward(const Tensor& x) override;

  Tensor weight() const { return weight_; }
  Tensor bias() const { return bias_; }
  int64_t normalized_shape() const { return normalized_shape_; }
  double epsilon() const { return epsilon_; }

 private:
  int64_t normalized_shape_;
  double epsilon_;
  Tensor weight_;
  Tensor bias_;
};

}  // namespace crew::nn
