#pragma once
// RMSProp (Paddle's paddle.optimizer.RMSProp), with g' = g + weight_decay * p:
//   ms = rho ms + (1 - rho) g'^2
//   mom = momentum mom + lr g' / sqrt(ms + epsilon)             (centered = false)
//   mg = rho mg + (1 - rho) g';  mom = momentum mom + lr g' / sqrt(ms - mg^2 + epsilon)
//   p -= mom
// Accumulators "mean_square", "momentum" and, when centered, "mean_grad" (zeros).
#include "crew/optim/optimizer.h"

namespace crew::optim {

struct RMSPropOptions {
  LearningRate learning_rate = 0.001;  // Paddle requires it; no default there
  double rho = 0.95;
  double epsilon = 1e-6;
  double momentum = 0.0;
  bool centered = false;
  double weight_decay = 0.0;                // L2 coefficient added to the gradient
  std::shared_ptr<GradientClip> grad_clip;  // applied at each step(); null = none
};

class RMSProp : public Optimizer {
 public:
  explicit RMSProp(std::vector<Tensor> parameters, RMSPropOptions options = {});
  explicit RMSProp(NamedParameters parameters, RMSPropOptions options = {});

 protected:
  void update(size_t index, Tensor& param, const Tensor& grad, double lr) override;

 private:
  RMSPropOptions options_;
};

}  // namespace crew::optim
