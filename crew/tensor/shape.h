#pragma once
// Tensor shapes: a list of non-negative extents, row-major.
#include <cstdint>
#include <string>
#include <vector>

namespace crew {

using Shape = std::vector<int64_t>;

// The most elements a shape may describe: 2^60, so that bytes (up to 8 per element) and byte
// offsets fit in int64_t whatever the dtype.
inline constexpr int64_t kMaxNumel = int64_t{1} << 60;
// Product of the extents (1 for a scalar shape {}); throws ValueError on a negative extent or
// when the product of the (nonzero) extents exceeds kMaxNumel.
int64_t shape_numel(const Shape& shape);
// "[2, 3, 4]".
std::string shape_str(const Shape& shape);
// Resolves one -1 extent so that the total equals numel; throws ValueError naming both shapes.
Shape infer_shape(const Shape& requested, int64_t numel);
// A shape viewed as [outer, extent, inner] around one axis (for reductions along it).
struct AxisSplit {
  int64_t outer = 1, extent = 1, inner = 1;
};
AxisSplit split_at_axis(const Shape& shape, int64_t axis);
// Normalises a possibly negative axis into [0, ndim); throws IndexError.
int64_t normalize_axis(int64_t axis, int64_t ndim);

}  // namespace crew
