#include "crew/autograd/ops_cast.h"

#include "crew/autograd/function.h"

namespace crew {

Tensor cast(const Tensor& x, DType dtype) {
  if (x.dtype() == dtype) return x;
  Tensor y = x.to(dtype);
  // Integer results carry no gradient (Paddle stops it there too).
  if (is_floating(x.dtype()) && is_floating(dtype) && autograd::should_record({&x})) {
    autograd::record(y, "cast", {x}, [from = x.dtype()](const Tensor& g, const std::vector<bool>&) {
      return std::vector<Tensor>{g.to(from)};
    });
  }
  return y;
}

}  // namespace crew
