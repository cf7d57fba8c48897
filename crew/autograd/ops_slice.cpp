// slice and split along one axis (copies; gradients scatter back into zeros).
#include <algorithm>

#include "crew/autograd/function.h"
#include "crew/autograd/ops.h"
#include "crew/tensor/kernels/copy_strided.h"

namespace crew {
namespace {

int64_t clamp_index(int64_t i, int64_t extent) {
  if (i < 0) i += extent;
  return std::clamp<int64_t>(i, 0, extent);
}

}  // namespace

Tensor slice(const Tensor& x, int64_t axis, int64_t start, int64_t stop) {
  CREW_CHECK(x.dim() >= 1, "slice: tensor of shape ", shape_str(x.shape()), " has no axis ", axis);
  const int64_t a = normalize_axis(axis, x.dim());
  const AxisSplit p = split_at_axis(x.shape(), a);
  const int64_t begin = clamp_index(start, p.extent);
  const int64_t end = std::max(begin, clamp_index(stop, p.extent));
  Tensor y = kernels::slice_axis(x, a, begin, end);
  if (autograd::should_record({&x})) {
    autograd::record(y, "slice", {x}, [in = x.shape(), a, begin](const Tensor& g, const std::vector<bool>&) {
      return std::vector<Tensor>{kernels::slice_scatter(g, in, a, begin)};
    });
  }
  return y;
}

std::vector<Tensor> split(const Tensor& x, int64_t sections, int64_t axis) {
  CREW_CHECK(x.dim() >= 1, "split: tensor of shape ", shape_str(x.shape()), " has no axis ", axis);
  const int64_t a = normalize_axis(axis, x.dim());
  const int64_t extent = x.shape()[a];
  CREW_CHECK(sections > 0 && extent % sections == 0, "split: axis ", axis, " of shape ", shape_str(x.shape()),
             " (extent ", extent, ") does not divide into ", sections, " equal sections");
  const int64_t step = extent / sections;
  std::vector<Tensor> out;
  out.reserve(static_cast<size_t>(sections));
  for (int64_t s = 0; s < sections; ++s) out.push_back(slice(x, a, s * step, (s + 1) * step));
  return out;
}

}  // namespace crew
