#include "crew/nn/linear.h"

#include "crew/core/check.h"
#include "crew/nn/functional.h"
#include "crew/nn/init.h"

namespace crew::nn {

Linear::Linear(int64_t in_features, int64_t out_features, bool bias)
    : Layer("linear"), in_features_(in_features), out_features_(out_features) {
  CREW_CHECK(in_features > 0 && out_features > 0, "Linear: features must be positive, got in=", in_features,
             " out=", out_features);
  Tensor w = Tensor::empty({in_features, out_features});
  init::xavier_uniform_(w);
  weight_ = register_parameter("weight", w);
  if (bias) bias_ = register_parameter("bias", Tensor::zeros({out_features}));
}

Tensor Linear::forward(const Tensor& x) {
  CREW_CHECK(x.dim() >= 1 && x.size(-1) == in_features_, full_name(), ": expected input [..., ", in_features_,
             "], got ", shape_str(x.shape()));
  return functional::linear(x, weight_, bias_);
}

}  // namespace crew::nn
