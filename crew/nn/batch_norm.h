#pragma once
// BatchNorm2D: Paddle's nn.BatchNorm2D over x [N, C, H, W]. Training normalises with the
// batch statistics and updates the running ones (running = momentum * running +
// (1 - momentum) * batch, Paddle's convention); eval uses the running statistics.
// Parameters weight (= 1) and bias (= 0), buffers _mean (= 0) and _variance (= 1), all [C],
// under Paddle's names so state_dict keys match Paddle's ("bn._mean").
#include <cstdint>

#include "crew/nn/layer.h"

namespace crew::nn {

class BatchNorm2D : public Layer {
 public:
  explicit BatchNorm2D(int64_t num_features, double momentum = 0.9, double epsilon = 1e-5);
  Tensor forward(const Tensor& x) override;

  Tensor weight() const { return weight_; }
  Tensor bias() const { return bias_; }
  Tensor running_mean() const { return mean_; }
  Tensor running_variance() const { return variance_; }
  int64_t num_features() const { return num_features_; }
  double momentum() const { return momentum_; }
  double epsilon() const { return epsilon_; }

 private:
  int64_t num_features_;
  double momentum_;
  double epsilon_;
  Tensor weight_, bias_, mean_, variance_;
};

}  // namespace crew::nn
