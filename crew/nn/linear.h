#pragma once
// Linear: Paddle's nn.Linear. x [..., in] -> x @ weight + bias = [..., out], with
// weight [in, out] (Paddle's layout; torch.nn.Linear stores the transpose).
//
//   Linear fc(576, 64);
//   Tensor y = fc(x);                 // x [N, 576] -> y [N, 64]
#include <cstdint>

#include "crew/nn/layer.h"

namespace crew::nn {

class Linear : public Layer {
 public:
  // Initialised as Paddle does by default: weight ~ XavierUniform(fan_in = in, fan_out = out),
  // i.e. U(-sqrt(6 / (in + out)), +sqrt(6 / (in + out))); bias = 0.
  Linear(int64_t in_features, int64_t out_features, bool bias = true);

  Tensor forward(const Tensor& x) override;

  Tensor weight() const { return weight_; }
  Tensor bias() const { return bias_; }  // undefined without bias
  int64_t in_features() const { return in_features_; }
  int64_t out_features() const { return out_features_; }

 private:
  int64_t in_features_;
  int64_t out_features_;
  Tensor weight_;
  Tensor bias_;
};

}  // namespace crew::nn
