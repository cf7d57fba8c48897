#pragma once
// Adamax (Paddle's paddle.optimizer.Adamax), per parameter, with t counting its steps and
// g' = g + weight_decay * p:
//   m = beta1 m + (1 - beta1) g';  u = max(beta2 u + epsilon, |g'|)
//   p -= lr / (1 - beta1^t) * m / u
// Accumulators "moment", "inf_norm" (zeros) and the scalar "beta1_pow_acc" (beta1^t).
#include "crew/optim/optimizer.h"

namespace crew::optim {

struct AdamaxOptions {
  LearningRate learning_rate = 0.001;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double epsilon = 1e-8;
  double weight_decay = 0.0;                // L2 coefficient added to the gradient
  std::shared_ptr<GradientClip> grad_clip;  // applied at each step(); null = none
};

class Adamax : public Optimizer {
 public:
  explicit Adamax(std::vector<Tensor> parameters, AdamaxOptions options = {});
  explicit Adamax(NamedParameters parameters, AdamaxOptions options = {});

 protected:
  void update(size_t index, Tensor& param, const Tensor& grad, double lr) override;

 private:
  AdamaxOptions options_;
};

}  // namespace crew::optim
