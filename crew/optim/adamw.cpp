#include "crew/optim/adamw.h"

#include "crew/core/check.h"

namespace crew::optim {
namespace {

AdamOptions adam_part(const AdamWOptions& o) {
  return AdamOptions{o.learning_rate, o.beta1, o.beta2, o.epsilon, /*weight_decay=*/0.0, o.grad_clip};
}

}  // namespace

AdamW::AdamW(std::vector<Tensor> parameters, AdamWOptions options)
    : AdamW(detail::number_parameters(std::move(parameters)), std::move(options)) {}

AdamW::AdamW(NamedParameters parameters, AdamWOptions options)
    : Adam("AdamW", std::move(parameters), adam_part(options)), coeff_(options.weight_decay) {
  CREW_CHECK(coeff_ >= 0.0, "AdamW: weight_decay must be >= 0, got ", coeff_);
  for (const auto& name : parameter_names()) {
    decay_.push_back(!options.apply_decay_param_fun || options.apply_decay_param_fun(name));
  }
}

double AdamW::decay_scale(size_t index, double lr) const { return decay_[index] ? 1.0 - lr * coeff_ : 1.0; }

}  // namespace crew::optim
