#include "crew/nn/flatten.h"

#include "crew/core/check.h"
#include "crew/nn/functional.h"

namespace crew::nn {

Shape Flatten::output_shape(const Shape& input) const {
  int64_t ndim = static_cast<int64_t>(input.size());
  if (ndim == 0) return Shape{1};
  int64_t start = normalize_axis(start_axis_, ndim);
  int64_t stop = normalize_axis(stop_axis_, ndim);
  CREW_CHECK(start <= stop, full_name(), ": start_axis ", start_axis_, " is after stop_axis ", stop_axis_,
             " for input ", shape_str(input));
  Shape out(input.begin(), input.begin() + start);
  int64_t merged = 1;
  for (int64_t i = start; i <= stop; ++i) merged *= input[i];
  out.push_back(merged);
  out.insert(out.end(), input.begin() + stop + 1, input.end());
  return out;
}

Tensor Flatten::forward(const Tensor& x) {
  output_shape(x.shape());  // validates the axes with this layer's name in the message
  return functional::flatten(x, start_axis_, stop_axis_);
}

}  // namespace crew::nn
