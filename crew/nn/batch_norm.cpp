#include "crew/nn/batch_norm.h"

#include "crew/core/check.h"
#include "crew/nn/functional.h"

namespace crew::nn {

BatchNorm2D::BatchNorm2D(int64_t num_features, double momentum, double epsilon)
    : BatchNorm2D("batch_norm2d", num_features, momentum, epsilon) {}

BatchNorm2D::BatchNorm2D(const std::string& name_scope, int64_t num_features, double momentum, double epsilon)
    : Layer(name_scope), num_features_(num_features), momentum_(momentum), epsilon_(epsilon) {
  CREW_CHECK(num_features > 0, "BatchNorm2D: num_features must be positive, got ", num_features);
  CREW_CHECK(momentum >= 0.0 && momentum <= 1.0, "BatchNorm2D: momentum must be in [0, 1], got ", momentum);
  CREW_CHECK(epsilon > 0.0, "BatchNorm2D: epsilon must be positive, got ", epsilon);
  weight_ = register_parameter("weight", Tensor::ones({num_features}));
  bias_ = register_parameter("bias", Tensor::zeros({num_features}));
  mean_ = register_buffer("_mean", Tensor::zeros({num_features}));
  variance_ = register_buffer("_variance", Tensor::ones({num_features}));
}

Tensor BatchNorm2D::forward(const Tensor& x) {
  CREW_CHECK(x.dim() == 4 && x.size(1) == num_features_, full_name(), ": expected input [N, ", num_features_,
             ", H, W], got ", shape_str(x.shape()));
  return normalize(x);
}

Tensor BatchNorm2D::normalize(const Tensor& x) {
  return functional::batch_norm(x, mean_, variance_, weight_, bias_, training(), momentum_, epsilon_,
                                stats_sync_);
}

}  // namespace crew::nn
