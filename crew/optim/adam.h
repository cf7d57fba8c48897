#pragma once
// Adam (Paddle's paddle.optimizer.Adam), per parameter, with t counting that parameter's steps:
//   g' = g + weight_decay * p                      (L2 regularisation; 0 by default)
//   m1 = beta1 m1 + (1 - beta1) g';   m2 = beta2 m2 + (1 - beta2) g'^2
//   lr_t = lr * sqrt(1 - beta2^t) / (1 - beta1^t)
//   p -= lr_t * m1 / (sqrt(m2) + epsilon * sqrt(1 - beta2^t))
// Accumulators "moment1", "moment2" (zeros) and scalars "beta1_pow_acc", "beta2_pow_acc"
// (beta^t, starting at beta), Paddle's names.
#include "crew/optim/optimizer.h"

namespace crew::optim {

struct AdamOptions {
  LearningRate learning_rate = 0.001;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double epsilon = 1e-8;
  double weight_decay = 0.0;                // L2 coefficient added to the gradient
  std::shared_ptr<GradientClip> grad_clip;  // applied at each step(); null = none
};

class Adam : public Optimizer {
 public:
  explicit Adam(std::vector<Tensor> parameters, AdamOptions options = {});
  explicit Adam(NamedParameters parameters, AdamOptions options = {});

 protected:
  Adam(std::string name, NamedParameters parameters, AdamOptions options);
  void update(size_t index, Tensor& param, const Tensor& grad, double lr) override;
  // The factor p is multiplied by before the update (AdamW's decoupled decay); 1 for Adam.
  virtual double decay_scale(size_t index, double lr) const { return 1.0; }

 private:
  AdamOptions options_;
};

}  // namespace crew::optim
