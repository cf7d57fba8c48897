#include "crew/optim/sgd.h"

#include "crew/core/check.h"
#include "crew/tensor/kernels/optimizer_update.h"

namespace crew::optim {
namespace {

void check_options(const SGDOptions& o) {
  CREW_CHECK(o.weight_decay >= 0.0, "SGD: weight_decay must be >= 0, got ", o.weight_decay);
}

}  // namespace

SGD::SGD(std::vector<Tensor> parameters, SGDOptions options)
    : SGD(detail::number_parameters(std::move(parameters)), std::move(options)) {}

SGD::SGD(NamedParameters parameters, SGDOptions options)
    : Optimizer("SGD", std::move(parameters), options.learning_rate, {}), options_(options) {
  check_options(options_);
  set_grad_clip(options_.grad_clip);
}

void SGD::update(size_t, Tensor& param, const Tensor& grad, double lr) {
  kernels::sgd_update(param, grad, lr, options_.weight_decay);
}

}  // namespace crew::optim
