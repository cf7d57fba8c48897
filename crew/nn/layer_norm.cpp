#include "crew/nn/layer_norm.h"

#include "crew/core/check.h"
#include "crew/nn/functional.h"

namespace crew::nn {

LayerNorm::LayerNorm(int64_t normalized_shape, double epsilon)
    : Layer("layer_norm"), normalized_shape_(normalized_shape), epsilon_(epsilon) {
  CREW_CHECK(normalized_shape > 0, "LayerNorm: normalized_shape must be positive, got ", normalized_shape);
  CREW_CHECK(epsilon > 0, "LayerNorm: epsilon must be positive, got ", epsilon);
  weight_ = register_parameter("weight", Tensor::ones({normalized_shape}));
  bias_ = register_parameter("bias", Tensor::zeros({normalized_shape}));
}

Tensor LayerNorm::forward(const Tensor& x) {
  CREW_CHECK(x.dim() >= 1 && x.size(-1) == normalized_shape_, full_name(), ": expected input [..., ",
             normalized_shape_, "], got ", shape_str(x.shape()));
  return functional::layer_norm(x, {normalized_shape_}, weight_, bias_, epsilon_);
}

}  // namespace crew::nn
