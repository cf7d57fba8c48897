#pragma once
// Dropout: Paddle's nn.Dropout(p) ("upscale_in_train"): in training, zeroes each element with
// probability p and scales the rest by 1/(1-p); in eval, the identity.
#include "crew/nn/layer.h"
#include "crew/tensor/random.h"

namespace crew::nn {

class Dropout : public Layer {
 public:
  // gen: the random source (crew::default_generator() when null); not owned.
  explicit Dropout(double p = 0.5, Generator* gen = nullptr);
  Tensor forward(const Tensor& x) override;
  double p() const { return p_; }

 private:
  double p_;
  Generator* gen_;
};

}  // namespace crew::nn
