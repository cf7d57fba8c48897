#pragma once
// AdamW (Paddle's paddle.optimizer.AdamW): Adam with decoupled weight decay. Before each
// Adam update, p *= 1 - lr * weight_decay for every parameter that apply_decay_param_fun
// accepts (all when it is empty); the gradient itself is not regularised.
//
//   AdamW opt(net->named_parameters(), {.learning_rate = 1e-3, .weight_decay = 0.01,
//             .apply_decay_param_fun = [](const std::string& n) { return !n.ends_with("bias"); }});
#include <functional>
#include <string>

#include "crew/optim/adam.h"

namespace crew::optim {

struct AdamWOptions {
  LearningRate learning_rate = 0.001;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double epsilon = 1e-8;
  double weight_decay = 0.01;  // Paddle's `coeff`
  // Receives the parameter's name ("0", "1", ... for unnamed parameters); true = decay it.
  std::function<bool(const std::string&)> apply_decay_param_fun;
  std::shared_ptr<GradientClip> grad_clip;  // applied at each step(); null = none
};

class AdamW : public Adam {
 public:
  explicit AdamW(std::vector<Tensor> parameters, AdamWOptions options = {});
  explicit AdamW(NamedParameters parameters, AdamWOptions options = {});

 protected:
  double decay_scale(size_t index, double lr) const override;

 private:
  double coeff_;
  std::vector<bool> decay_;  // per parameter, from apply_decay_param_fun
};

}  // namespace crew::optim
