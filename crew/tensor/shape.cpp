#include "crew/tensor/shape.h"

#include <sstream>

#include "crew/core/check.h"

namespace crew {

int64_t shape_numel(const Shape& shape) {
  // Zero extents are multiplied as 1 first, so [0, 2^40, 2^40] is refused like [2^40, 2^40]:
  // strides and byte offsets of such a shape would overflow even though it holds nothing.
  int64_t bound = 1;
  bool empty = false;
  for (int64_t d : shape) {
    CREW_CHECK(d >= 0, "shape ", shape_str(shape), ": negative extent ", d);
    empty = empty || d == 0;
    CREW_CHECK(!__builtin_mul_overflow(bound, d == 0 ? 1 : d, &bound) && bound <= kMaxNumel, "shape ",
               shape_str(shape), ": more than ", kMaxNumel, " elements");
  }
  return empty ? 0 : bound;
}

std::string shape_str(const Shape& shape) {
  std::ostringstream os;
  os << '[';
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) os << ", ";
    os << shape[i];
  }
  os << ']';
  return os.str();
}

Shape infer_shape(const Shape& requested, int64_t numel) {
  Shape out = requested;
  int64_t known = 1;
  int infer_at = -1;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      CREW_CHECK(infer_at < 0, "reshape: at most one -1 allowed in shape ", shape_str(requested));
      infer_at = static_cast<int>(i);
    } else {
      CREW_CHECK(out[i] >= 0, "reshape: negative extent in shape ", shape_str(requested));
      CREW_CHECK(!__builtin_mul_overflow(known, out[i], &known) && known <= kMaxNumel, "reshape: shape ",
                 shape_str(requested), " has more than ", kMaxNumel, " elements");
    }
  }
  if (infer_at >= 0) {
    CREW_CHECK(known > 0 && numel % known == 0, "reshape: cannot view ", numel, " elements as ",
               shape_str(requested));
    out[infer_at] = numel / known;
  }
  CREW_CHECK(shape_numel(out) == numel, "reshape: cannot view ", numel, " elements as ",
             shape_str(requested));
  return out;
}

AxisSplit split_at_axis(const Shape& shape, int64_t axis) {
  AxisSplit r;
  for (int64_t d = 0; d < axis; ++d) r.outer *= shape[d];
  r.extent = shape[axis];
  for (int64_t d = axis + 1; d < static_cast<int64_t>(shape.size()); ++d) r.inner *= shape[d];
  return r;
}

int64_t normalize_axis(int64_t axis, int64_t ndim) {
  int64_t a = axis < 0 ? axis + ndim : axis;
  CREW_CHECK_T(IndexError, a >= 0 && a < ndim, "axis ", axis, " out of range for a ", ndim, "-d tensor");
  return a;
}

}  // namespace crew
