#pragma once
// Adagrad and Adadelta (Paddle's paddle.optimizer.Adagrad / Adadelta), g' = g + weight_decay * p:
//   Adagrad:   m += g'^2;  p -= lr g' / (sqrt(m) + epsilon)
//              accumulator "moment", starting at initial_accumulator_value
//   Adadelta:  asg = rho asg + (1 - rho) g'^2;  u = -sqrt((asu + epsilon) / (asg + epsilon)) g'
//              asu = rho asu + (1 - rho) u^2;  p += u
//              accumulators "avg_squared_grad", "avg_squared_update" (zeros). As in Paddle 2.4
//              the update does not use the learning rate (later Paddle scales u by it).
#include "crew/optim/optimizer.h"

namespace crew::optim {

struct AdagradOptions {
  LearningRate learning_rate = 0.001;  // Paddle requires it; no default there
  double epsilon = 1e-6;
  double initial_accumulator_value = 0.0;
  double weight_decay = 0.0;                // L2 coefficient added to the gradient
  std::shared_ptr<GradientClip> grad_clip;  // applied at each step(); null = none
};

class Adagrad : public Optimizer {
 public:
  explicit Adagrad(std::vector<Tensor> parameters, AdagradOptions options = {});
  explicit Adagrad(NamedParameters parameters, AdagradOptions options = {});

 protected:
  void update(size_t index, Tensor& param, const Tensor& grad, double lr) override;

 private:
  AdagradOptions options_;
};

struct AdadeltaOptions {
  LearningRate learning_rate = 0.001;  // kept for Paddle's signature and get_lr(); unused by the update
  double epsilon = 1e-6;
  double rho = 0.95;
  double weight_decay = 0.0;                // L2 coefficient added to the gradient
  std::shared_ptr<GradientClip> grad_clip;  // applied at each step(); null = none
};

class Adadelta : public Optimizer {
 public:
  explicit Adadelta(std::vector<Tensor> parameters, AdadeltaOptions options = {});
  explicit Adadelta(NamedParameters parameters, AdadeltaOptions options = {});

 protected:
  void update(size_t index, Tensor& param, const Tensor& grad, double lr) override;

 private:
  AdadeltaOptions options_;
};

}  // namespace crew::optim
