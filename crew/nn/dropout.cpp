#include "crew/nn/dropout.h"

#include "crew/core/check.h"
#include "crew/nn/functional.h"

namespace crew::nn {

Dropout::Dropout(double p, Generator* gen) : Layer("dropout"), p_(p), gen_(gen) {
  CREW_CHECK(p >= 0.0 && p <= 1.0, "Dropout: p must be in [0, 1], got ", p);
}

Tensor Dropout::forward(const Tensor& x) {
  if (!training() || p_ == 0.0) return x;
  return functional::dropout(x, p_, true, gen_);
}

}  // namespace crew::nn
