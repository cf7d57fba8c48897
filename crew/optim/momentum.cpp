#include "crew/optim/momentum.h"

#include "crew/core/check.h"
#include "crew/tensor/kernels/optimizer_update.h"

namespace crew::optim {
namespace {

void check_options(const MomentumOptions& o) {
  CREW_CHECK(o.momentum >= 0.0, "Momentum: momentum must be >= 0, got ", o.momentum);
  CREW_CHECK(o.weight_decay >= 0.0, "Momentum: weight_decay must be >= 0, got ", o.weight_decay);
}

}  // namespace

Momentum::Momentum(std::vector<Tensor> parameters, MomentumOptions options)
    : Momentum(detail::number_parameters(std::move(parameters)), std::move(options)) {}

Momentum::Momentum(NamedParameters parameters, MomentumOptions options)
    : Optimizer("Momentum", std::move(parameters), options.learning_rate, {{"velocity"}}), options_(options) {
  check_options(options_);
  set_grad_clip(options_.grad_clip);
}

void Momentum::update(size_t index, Tensor& param, const Tensor& grad, double lr) {
  Tensor& v = accumulator("velocity", index);
  kernels::momentum_update(param, grad, v,
                           {lr, options_.momentum, options_.weight_decay, options_.use_nesterov});
}

}  // namespace crew::optim
