// linear: y = x W + b with W [in, out] (Paddle's layout), on crew/tensor/kernels/linear.h.
#include "crew/tensor/kernels/linear.h"

#include "crew/autograd/autocast.h"
#include "crew/autograd/function.h"
#include "crew/nn/functional.h"
#include "crew/tensor/kernels/broadcast.h"
#include "crew/tensor/kernels/low_precision.h"

namespace crew::nn::functional {

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  if (auto in = amp::autocast_operands("linear", x, weight, bias))
    return linear((*in)[0], (*in)[1], (*in)[2]);
  kernels::check_floating_or_half(x, "linear");
  CREW_CHECK(weight.dim() == 2, "linear: weight must be [in, out], got shape ", shape_str(weight.shape()));
  CREW_CHECK(x.dim() >= 1 && x.size(-1) == weight.size(0), "linear: input ", shape_str(x.shape()),
             " does not match weight [in, out] = ", shape_str(weight.shape()));
  kernels::check_same_dtype("linear", "x", x, "weight", weight);
  kernels::check_same_dtype("linear", "weight", weight, "bias", bias);
  if (bias.defined()) {
    CREW_CHECK(bias.numel() == weight.size(1) && bias.dtype() == weight.dtype(), "linear: bias ",
               shape_str(bias.shape()), " does not match out features ", weight.size(1));
  }
  Tensor y = kernels::linear_forward(x, weight, bias);
  if (autograd::should_record({&x, &weight, &bias})) {
    autograd::record(y, "linear", {x, weight, bias},
                     [x, weight](const Tensor& g, const std::vector<bool>& needs) {
                       return kernels::linear_backward(g, x, weight, {needs[0], needs[1], needs[2]});
                     },
                     {x, weight});
  }
  return y;
}

}  // namespace crew::nn::functional
