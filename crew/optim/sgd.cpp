#include "crew/optim/sgd.h"

#include "crew/core/check.h"
#include "crew/optim/update_kernels.h"

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
  if (param.dtype() == DType::FLOAT32) {
    kernels::sgd(param.data<float>(), grad.data<float>(), param.numel(), static_cast<float>(lr),
                 static_cast<float>(options_.weight_decay));
  } else {
    kernels::sgd(param.data<double>(), grad.data<double>(), param.numel(), lr, options_.weight_decay);
  }
}

}  // namespace crew::optim
