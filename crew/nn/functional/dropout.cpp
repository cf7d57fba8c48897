// Inverted dropout ("upscale_in_train", Paddle's default mode): the mask comes from
// crew/tensor/kernels/dropout, its stream seeded from one draw of the caller's Generator, so
// results are reproducible under crew::seed without locking per element.
#include "crew/tensor/kernels/dropout.h"

#include "crew/autograd/autocast.h"
#include "crew/autograd/function.h"
#include "crew/nn/functional.h"
#include "crew/tensor/kernels/broadcast.h"

namespace crew::nn::functional {

Tensor dropout(const Tensor& x, double p, bool training, Generator* gen) {
  if (auto in = training && p != 0.0 ? amp::autocast_operands("dropout", x) : std::nullopt) {
    return dropout((*in)[0], p, training, gen);
  }
  kernels::check_floating(x, "dropout");
  CREW_CHECK(p >= 0.0 && p <= 1.0, "dropout: p must be in [0, 1], got ", p);
  if (!training || p == 0.0) return x;
  Generator& g = gen ? *gen : default_generator();
  const Tensor mask = kernels::dropout_mask(x, p, g.next_u64());
  Tensor y = kernels::binary(kernels::BinaryOp::MUL, x, mask, "dropout");
  if (autograd::should_record({&x})) {
    autograd::record(y, "dropout", {x}, [mask](const Tensor& grad, const std::vector<bool>&) {
      return std::vector<Tensor>{kernels::binary(kernels::BinaryOp::MUL, grad, mask, "dropout backward")};
    });
  }
  return y;
}

}  // namespace crew::nn::functional
