#pragma once
// Gradient clipping (Paddle's paddle.nn.ClipGradByGlobalNorm / ClipGradByNorm /
// ClipGradByValue), applied in place to the gradients an optimizer is about to use. Pass one
// as an optimizer's grad_clip option (it runs at the start of every step()), or call it.
//
//   Adam opt(net->parameters(), {.learning_rate = 1e-3,
//                                .grad_clip = std::make_shared<ClipGradByGlobalNorm>(1.0)});
#include <vector>

#include "crew/tensor/tensor.h"

namespace crew::optim {

class GradientClip {
 public:
  virtual ~GradientClip() = default;
  // Clips the defined gradients of params (float32/float64) in place.
  virtual void operator()(const std::vector<Tensor>& params) const = 0;
};

// g *= clip_norm / max(global_norm, clip_norm), global_norm = sqrt(sum of all squared grads).
class ClipGradByGlobalNorm : public GradientClip {
 public:
  explicit ClipGradByGlobalNorm(double clip_norm);
  void operator()(const std::vector<Tensor>& params) const override;
  // The global norm of the defined gradients of params.
  static double global_norm(const std::vector<Tensor>& params);

 private:
  double clip_norm_;
};

// Per tensor: g *= clip_norm / ||g|| when ||g|| > clip_norm.
class ClipGradByNorm : public GradientClip {
 public:
  explicit ClipGradByNorm(double clip_norm);
  void operator()(const std::vector<Tensor>& params) const override;

 private:
  double clip_norm_;
};

// g = clamp(g, min, max); min defaults to -max.
class ClipGradByValue : public GradientClip {
 public:
  explicit ClipGradByValue(double max);
  ClipGradByValue(double max, double min);
  void operator()(const std::vector<Tensor>& params) const override;

 private:
  double max_;
  double min_;
};

}  // namespace crew::optim
