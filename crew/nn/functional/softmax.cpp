// softmax and log_softmax along an axis (crew/tensor/kernels/softmax).
#include "crew/tensor/kernels/softmax.h"

#include "crew/autograd/autocast.h"
#include "crew/autograd/function.h"
#include "crew/nn/functional.h"
#include "crew/tensor/kernels/broadcast.h"
#include "crew/tensor/kernels/low_precision.h"

namespace crew::nn::functional {
namespace {

Tensor softmax_impl(const Tensor& x, int64_t axis, bool log_out, const char* name) {
  if (auto in = amp::autocast_operands(name, x)) return softmax_impl((*in)[0], axis, log_out, name);
  kernels::check_floating_or_half(x, name);
  CREW_CHECK(x.dim() >= 1, name, ": tensor of shape ", shape_str(x.shape()), " has no axis");
  const int64_t a = normalize_axis(axis, x.dim());
  Tensor y = kernels::softmax_forward(x, a, log_out);
  if (autograd::should_record({&x})) {
    autograd::record(y, name, {x},
                     [a, log_out, y = y.detach()](const Tensor& g, const std::vector<bool>&) {
                       return std::vector<Tensor>{kernels::softmax_backward(g, y, a, log_out)};
                     },
                     {y});
  }
  return y;
}

}  // namespace

Tensor softmax(const Tensor& x, int64_t axis) { return softmax_impl(x, axis, false, "softmax"); }
Tensor log_softmax(const Tensor& x, int64_t axis) { return softmax_impl(x, axis, true, "log_softmax"); }

}  // namespace crew::nn::functional
