#include "crew/optim/lamb.h"

#include "crew/core/check.h"
#include "crew/tensor/kernels/adaptive_update.h"

namespace crew::optim {

Lamb::Lamb(std::vector<Tensor> parameters, LambOptions options)
    : Lamb(detail::number_parameters(std::move(parameters)), std::move(options)) {}

Lamb::Lamb(NamedParameters parameters, LambOptions options)
    : Optimizer("Lamb", std::move(parameters), options.learning_rate,
                {{"moment1"}, {"moment2"}, {"beta1_pow_acc", true}, {"beta2_pow_acc", true}}),
      options_(std::move(options)) {
  CREW_CHECK(options_.beta1 >= 0.0 && options_.beta1 < 1.0, "Lamb: beta1 must be in [0, 1), got ",
             options_.beta1);
  CREW_CHECK(options_.beta2 >= 0.0 && options_.beta2 < 1.0, "Lamb: beta2 must be in [0, 1), got ",
             options_.beta2);
  CREW_CHECK(options_.epsilon >= 0.0, "Lamb: epsilon must be >= 0, got ", options_.epsilon);
  CREW_CHECK(options_.lamb_weight_decay >= 0.0, "Lamb: lamb_weight_decay must be >= 0, got ",
             options_.lamb_weight_decay);
  const auto& names = parameter_names();
  for (size_t i = 0; i < names.size(); ++i) {
    const bool excluded =
        options_.exclude_from_weight_decay && options_.exclude_from_weight_decay(i, names[i]);
    weight_decay_.push_back(excluded ? 0.0 : options_.lamb_weight_decay);
  }
  set_grad_clip(options_.grad_clip);
}

void Lamb::update(size_t index, Tensor& param, const Tensor& grad, double lr) {
  Tensor& m1 = accumulator("moment1", index);
  Tensor& m2 = accumulator("moment2", index);
  Tensor& beta1_acc = accumulator("beta1_pow_acc", index, options_.beta1);
  Tensor& beta2_acc = accumulator("beta2_pow_acc", index, options_.beta2);
  const double beta1_pow = beta1_acc.item();
  const double beta2_pow = beta2_acc.item();
  kernels::lamb_update(
      param, grad, m1, m2,
      {lr, options_.beta1, options_.beta2, options_.epsilon, weight_decay_[index], beta1_pow, beta2_pow});
  beta1_acc.fill_(beta1_pow * options_.beta1);
  beta2_acc.fill_(beta2_pow * options_.beta2);
}

}  // namespace crew::optim
