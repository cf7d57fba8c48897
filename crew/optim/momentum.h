#pragma once
// Momentum (Paddle's paddle.optimizer.Momentum), with g' = g + weight_decay * p:
//   v = momentum * v + g';  p -= lr * v                       (use_nesterov = false)
//                           p -= lr * (g' + momentum * v)     (use_nesterov = true)
// Accumulator "velocity", zero at the start.
#include "crew/optim/optimizer.h"

namespace crew::optim {

struct MomentumOptions {
  LearningRate learning_rate = 0.001;
  double momentum = 0.9;
  bool use_nesterov = false;
  double weight_decay = 0.0;                // L2 coefficient added to the gradient
  std::shared_ptr<GradientClip> grad_clip;  // applied at each step(); null = none
};

class Momentum : public Optimizer {
 public:
  explicit Momentum(std::vector<Tensor> parameters, MomentumOptions options = {});
  explicit Momentum(NamedParameters parameters, MomentumOptions options = {});

 protected:
  void update(size_t index, Tensor& param, const Tensor& grad, double lr) override;

 private:
  MomentumOptions options_;
};

}  // namespace crew::optim
