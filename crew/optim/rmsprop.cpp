#include "crew/optim/rmsprop.h"

#include "crew/core/check.h"
#include "crew/tensor/kernels/adaptive_update.h"

namespace crew::optim {
namespace {

std::vector<AccumulatorSpec> rmsprop_accumulators(bool centered) {
  std::vector<AccumulatorSpec> specs = {{"mean_square"}, {"momentum"}};
  if (centered) specs.push_back({"mean_grad"});
  return specs;
}

void check_options(const RMSPropOptions& o) {
  CREW_CHECK(o.rho >= 0.0 && o.rho < 1.0, "RMSProp: rho must be in [0, 1), got ", o.rho);
  CREW_CHECK(o.epsilon >= 0.0, "RMSProp: epsilon must be >= 0, got ", o.epsilon);
  CREW_CHECK(o.momentum >= 0.0, "RMSProp: momentum must be >= 0, got ", o.momentum);
  CREW_CHECK(o.weight_decay >= 0.0, "RMSProp: weight_decay must be >= 0, got ", o.weight_decay);
}

}  // namespace

RMSProp::RMSProp(std::vector<Tensor> parameters, RMSPropOptions options)
    : RMSProp(detail::number_parameters(std::move(parameters)), std::move(options)) {}

RMSProp::RMSProp(NamedParameters parameters, RMSPropOptions options)
    : Optimizer("RMSProp", std::move(parameters), options.learning_rate,
                rmsprop_accumulators(options.centered)),
      options_(options) {
  check_options(options_);
  set_grad_clip(options_.grad_clip);
}

void RMSProp::update(size_t index, Tensor& param, const Tensor& grad, double lr) {
  Tensor& ms = accumulator("mean_square", index);
  Tensor& mom = accumulator("momentum", index);
  const Tensor mg = options_.centered ? accumulator("mean_grad", index) : Tensor();
  kernels::rmsprop_update(
      param, grad, ms, mg, mom,
      {lr, options_.rho, options_.epsilon, options_.momentum, options_.weight_decay, options_.centered});
}

}  // namespace crew::optim
