#include "crew/optim/adam.h"

#include <cmath>

#include "crew/core/check.h"
#include "crew/tensor/kernels/optimizer_update.h"

namespace crew::optim {
namespace {

const std::vector<AccumulatorSpec>& adam_accumulators() {
  static const std::vector<AccumulatorSpec> specs = {
      {"moment1", false}, {"moment2", false}, {"beta1_pow_acc", true}, {"beta2_pow_acc", true}};
  return specs;
}

}  // namespace

Adam::Adam(std::vector<Tensor> parameters, AdamOptions options)
    : Adam("Adam", detail::number_parameters(std::move(parameters)), options) {}

Adam::Adam(NamedParameters parameters, AdamOptions options) : Adam("Adam", std::move(parameters), options) {}

Adam::Adam(std::string name, NamedParameters parameters, AdamOptions options)
    : Optimizer(name, std::move(parameters), options.learning_rate, adam_accumulators()), options_(options) {
  CREW_CHECK(options.beta1 >= 0.0 && options.beta1 < 1.0, name, ": beta1 must be in [0, 1), got ",
             options.beta1);
  CREW_CHECK(options.beta2 >= 0.0 && options.beta2 < 1.0, name, ": beta2 must be in [0, 1), got ",
             options.beta2);
  CREW_CHECK(options.epsilon >= 0.0, name, ": epsilon must be >= 0, got ", options.epsilon);
  CREW_CHECK(options.weight_decay >= 0.0, name, ": weight_decay must be >= 0, got ", options.weight_decay);
  set_grad_clip(options.grad_clip);
}

void Adam::update(size_t index, Tensor& param, const Tensor& grad, double lr) {
  Tensor& m1 = accumulator("moment1", index);
  Tensor& m2 = accumulator("moment2", index);
  // The beta powers are float64 scalars in host memory (Paddle keeps them on the CPU too).
  Tensor& beta1_acc = accumulator("beta1_pow_acc", index, options_.beta1);
  Tensor& beta2_acc = accumulator("beta2_pow_acc", index, options_.beta2);
  const double beta1_pow = beta1_acc.item();
  const double beta2_pow = beta2_acc.item();

  kernels::AdamCoefficients c;
  c.beta1 = options_.beta1;
  c.beta2 = options_.beta2;
  c.lr_t = lr * std::sqrt(1.0 - beta2_pow) / (1.0 - beta1_pow);
  c.eps_t = options_.epsilon * std::sqrt(1.0 - beta2_pow);
  c.l2 = options_.weight_decay;
  c.decay_scale = decay_scale(index, lr);
  kernels::adam_update(param, grad, m1, m2, c);
  beta1_acc.fill_(beta1_pow * options_.beta1);
  beta2_acc.fill_(beta2_pow * options_.beta2);
}

}  // namespace crew::optim
