// Reductions: sum, mean (all elements or along an axis), argmax.
#include "crew/autograd/autocast.h"
#include "crew/autograd/function.h"
#include "crew/autograd/ops.h"
#include "crew/tensor/kernels/broadcast.h"
#include "crew/tensor/kernels/reduce.h"

namespace crew {
namespace {

// Broadcasts g (the reduced shape with the axis kept as 1) back to `shape`, times scale.
Tensor expand_back(const Tensor& g, const Shape& shape, double scale) {
  Tensor ones = Tensor::full(shape, scale, g.dtype(), g.place());
  return kernels::binary(kernels::BinaryOp::MUL, ones, g, "reduce backward");
}

Tensor sum_all(const Tensor& x, double scale, const char* name) {
  kernels::check_floating(x, name);
  Tensor flat = x.view({x.numel()});
  Tensor y =
      x.numel() == 0 ? Tensor::zeros({}, x.dtype(), x.place()) : kernels::sum_axis(flat, 0, false, scale);
  if (autograd::should_record({&x})) {
    autograd::record(y, name, {x}, [shape = x.shape(), scale](const Tensor& g, const std::vector<bool>&) {
      return std::vector<Tensor>{expand_back(g, shape, scale)};
    });
  }
  return y;
}

Tensor sum_axis(const Tensor& x, int64_t axis, bool keepdim, bool average, const char* name) {
  kernels::check_floating(x, name);
  const int64_t a = normalize_axis(axis, x.dim());
  const double scale = average ? 1.0 / static_cast<double>(x.shape()[a]) : 1.0;
  Tensor y = kernels::sum_axis(x, a, keepdim, scale);
  if (autograd::should_record({&x})) {
    autograd::record(y, name, {x}, [shape = x.shape(), a, scale](const Tensor& g, const std::vector<bool>&) {
      Shape kept = shape;
      kept[a] = 1;
      return std::vector<Tensor>{expand_back(g.view(kept), shape, scale)};
    });
  }
  return y;
}

}  // namespace

Tensor sum(const Tensor& x) {
  if (auto in = amp::autocast_operands("sum", x)) return sum((*in)[0]);
  return sum_all(x, 1.0, "sum");
}
Tensor mean(const Tensor& x) {
  if (auto in = amp::autocast_operands("mean", x)) return mean((*in)[0]);
  CREW_CHECK(x.numel() > 0, "mean: tensor of shape ", shape_str(x.shape()), " is empty");
  return sum_all(x, 1.0 / static_cast<double>(x.numel()), "mean");
}
Tensor sum(const Tensor& x, int64_t axis, bool keepdim) {
  if (auto in = amp::autocast_operands("sum", x)) return sum((*in)[0], axis, keepdim);
  return sum_axis(x, axis, keepdim, false, "sum");
}
Tensor mean(const Tensor& x, int64_t axis, bool keepdim) {
  if (auto in = amp::autocast_operands("mean", x)) return mean((*in)[0], axis, keepdim);
  return sum_axis(x, axis, keepdim, true, "mean");
}

Tensor argmax(const Tensor& x, int64_t axis) {
  CREW_CHECK(x.dim() >= 1, "argmax: tensor of shape ", shape_str(x.shape()), " has no axis");
  const int64_t a = normalize_axis(axis, x.dim());
  CREW_CHECK(x.shape()[a] > 0, "argmax: axis ", a, " of shape ", shape_str(x.shape()), " is empty");
  return kernels::argmax(x, a);
}

}  // namespace crew
