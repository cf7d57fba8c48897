#include "crew/optim/adamax.h"

#include "crew/core/check.h"
#include "crew/tensor/kernels/adaptive_update.h"

namespace crew::optim {

Adamax::Adamax(std::vector<Tensor> parameters, AdamaxOptions options)
    : Adamax(detail::number_parameters(std::move(parameters)), std::move(options)) {}

Adamax::Adamax(NamedParameters parameters, AdamaxOptions options)
    : Optimizer("Adamax", std::move(parameters), options.learning_rate,
                {{"moment"}, {"inf_norm"}, {"beta1_pow_acc", true}}),
      options_(options) {
  CREW_CHECK(options_.beta1 >= 0.0 && options_.beta1 < 1.0, "Adamax: beta1 must be in [0, 1), got ",
             options_.beta1);
  CREW_CHECK(options_.beta2 >= 0.0 && options_.beta2 < 1.0, "Adamax: beta2 must be in [0, 1), got ",
             options_.beta2);
  CREW_CHECK(options_.epsilon >= 0.0, "Adamax: epsilon must be >= 0, got ", options_.epsilon);
  CREW_CHECK(options_.weight_decay >= 0.0, "Adamax: weight_decay must be >= 0, got ", options_.weight_decay);
  set_grad_clip(options_.grad_clip);
}

void Adamax::update(size_t index, Tensor& param, const Tensor& grad, double lr) {
  Tensor& m = accumulator("moment", index);
  Tensor& u = accumulator("inf_norm", index);
  Tensor& beta1_acc = accumulator("beta1_pow_acc", index, options_.beta1);
  const double beta1_pow = beta1_acc.item();
  kernels::adamax_update(
      param, grad, m, u,
      {options_.beta1, options_.beta2, options_.epsilon, lr / (1.0 - beta1_pow), options_.weight_decay});
  beta1_acc.fill_(beta1_pow * options_.beta1);
}

}  // namespace crew::optim
