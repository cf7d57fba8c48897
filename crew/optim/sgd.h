#pragma once
// SGD (Paddle's paddle.optimizer.SGD): p -= lr * (g + weight_decay * p).
//
//   SGD opt(net->parameters(), {.learning_rate = 0.1});
#include "crew/optim/optimizer.h"

namespace crew::optim {

struct SGDOptions {
  LearningRate learning_rate = 0.001;
  double weight_decay = 0.0;                // L2 coefficient added to the gradient
  std::shared_ptr<GradientClip> grad_clip;  // applied at each step(); null = none
};

class SGD : public Optimizer {
 public:
  explicit SGD(std::vector<Tensor> parameters, SGDOptions options = {});
  explicit SGD(NamedParameters parameters, SGDOptions options = {});

 protected:
  void update(size_t index, Tensor& param, const Tensor& grad, double lr) override;

 private:
  SGDOptions options_;
};

}  // namespace crew::optim
