#include "crew/optim/adagrad.h"

#include <cmath>

#include "crew/core/check.h"
#include "crew/tensor/kernels/adaptive_update.h"

namespace crew::optim {

Adagrad::Adagrad(std::vector<Tensor> parameters, AdagradOptions options)
    : Adagrad(detail::number_parameters(std::move(parameters)), std::move(options)) {}

Adagrad::Adagrad(NamedParameters parameters, AdagradOptions options)
    : Optimizer("Adagrad", std::move(parameters), options.learning_rate, {{"moment"}}), options_(options) {
  CREW_CHECK(options_.epsilon >= 0.0, "Adagrad: epsilon must be >= 0, got ", options_.epsilon);
  CREW_CHECK(std::isfinite(options_.initial_accumulator_value) && options_.initial_accumulator_value >= 0.0,
             "Adagrad: initial_accumulator_value must be >= 0, got ", options_.initial_accumulator_value);
  CREW_CHECK(options_.weight_decay >= 0.0, "Adagrad: weight_decay must be >= 0, got ", options_.weight_decay);
  set_grad_clip(options_.grad_clip);
}

void Adagrad::update(size_t index, Tensor& param, const Tensor& grad, double lr) {
  Tensor& m = accumulator("moment", index, options_.initial_accumulator_value);
  kernels::adagrad_update(param, grad, m, {lr, options_.epsilon, options_.weight_decay});
}

Adadelta::Adadelta(std::vector<Tensor> parameters, AdadeltaOptions options)
    : Adadelta(detail::number_parameters(std::move(parameters)), std::move(options)) {}

Adadelta::Adadelta(NamedParameters parameters, AdadeltaOptions options)
    : Optimizer("Adadelta", std::move(parameters), options.learning_rate,
                {{"avg_squared_grad"}, {"avg_squared_update"}}),
      options_(options) {
  CREW_CHECK(options_.rho >= 0.0 && options_.rho < 1.0, "Adadelta: rho must be in [0, 1), got ",
             options_.rho);
  CREW_CHECK(options_.epsilon > 0.0, "Adadelta: epsilon must be > 0, got ", options_.epsilon);
  CREW_CHECK(options_.weight_decay >= 0.0, "Adadelta: weight_decay must be >= 0, got ",
             options_.weight_decay);
  set_grad_clip(options_.grad_clip);
}

void Adadelta::update(size_t index, Tensor& param, const Tensor& grad, double /*lr*/) {
  Tensor& asg = accumulator("avg_squared_grad", index);
  Tensor& asu = accumulator("avg_squared_update", index);
  kernels::adadelta_update(param, grad, asg, asu, {options_.rho, options_.epsilon, options_.weight_decay});
}

}  // namespace crew::optim
