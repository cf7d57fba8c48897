#pragma once
// Lamb (Paddle's paddle.optimizer.Lamb), per parameter, with t counting its steps:
//   m1 = beta1 m1 + (1 - beta1) g;  m2 = beta2 m2 + (1 - beta2) g^2
//   r = (m1 / (1 - beta1^t)) / (sqrt(m2 / (1 - beta2^t)) + epsilon) + lamb_weight_decay * p
//   p -= lr * (|p| / |r|) * r              (trust ratio 1 when either norm is 0)
// lamb_weight_decay is 0 for the parameters exclude_from_weight_decay picks. Accumulators
// "moment1", "moment2" (zeros) and scalars "beta1_pow_acc", "beta2_pow_acc", as Adam.
#include <functional>

#include "crew/optim/optimizer.h"

namespace crew::optim {

struct LambOptions {
  LearningRate learning_rate = 0.001;
  double lamb_weight_decay = 0.01;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double epsilon = 1e-6;
  // Called once per parameter at construction; true: no weight decay for it. Null: none excluded.
  std::function<bool(size_t index, const std::string& name)> exclude_from_weight_decay;
  std::shared_ptr<GradientClip> grad_clip;  // applied at each step(); null = none
};

class Lamb : public Optimizer {
 public:
  explicit Lamb(std::vector<Tensor> parameters, LambOptions options = {});
  explicit Lamb(NamedParameters parameters, LambOptions options = {});

 protected:
  void update(size_t index, Tensor& param, const Tensor& grad, double lr) override;

 private:
  LambOptions options_;
  std::vector<double> weight_decay_;  // per parameter
};

}  // namespace crew::optim
