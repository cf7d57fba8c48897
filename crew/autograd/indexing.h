#pragma once
// NumPy/Paddle indexing in C++: x[key] (differentiable) and x[key] = value. A key is a list
// of items: ints, slices with any nonzero step, None (a new axis of extent 1), one Ellipsis,
// and at most one tensor: int (its entries select along one axis, which becomes the
// index's shape) or bool (a mask over as many axes as it has, which become one axis of the
// selected count).
//
//   using I = crew::TensorIndex;
//   Tensor y = crew::index(x, {I::ellipsis(), I::slice(std::nullopt, std::nullopt, -2)});  // x[..., ::-2]
//   crew::index_put_(x, {I::tensor(x_mask)}, Tensor::scalar(0.0));                          // x[mask] = 0
#include <cstdint>
#include <optional>
#include <vector>

#include "crew/tensor/tensor.h"

namespace crew {

struct TensorIndex {
  enum class Kind { INT, SLICE, NONE, ELLIPSIS, TENSOR };
  Kind kind = Kind::NONE;
  int64_t index = 0;                   // INT
  std::optional<int64_t> start, stop;  // SLICE, Python's defaults when empty
  int64_t step = 1;                    // SLICE
  Tensor tensor;                       // TENSOR

  static TensorIndex integer(int64_t i) { return {Kind::INT, i, {}, {}, 1, {}}; }
  static TensorIndex slice(std::optional<int64_t> start, std::optional<int64_t> stop, int64_t step = 1) {
    return {Kind::SLICE, 0, start, stop, step, {}};
  }
  static TensorIndex none() { return {Kind::NONE, 0, {}, {}, 1, {}}; }
  static TensorIndex ellipsis() { return {Kind::ELLIPSIS, 0, {}, {}, 1, {}}; }
  static TensorIndex tensor_index(const Tensor& t) { return {Kind::TENSOR, 0, {}, {}, 1, t}; }
};

// x[key]: a new tensor (gradients flow back to x). IndexError for an index out of range or
// too many indices, ValueError for a step of 0 or a mask of the wrong shape.
Tensor index(const Tensor& x, const std::vector<TensorIndex>& key);
// x[key] = value, in place: value (broadcast to the selection, converted to x's dtype) is
// written where x[key] reads. Records no gradient; bumps x's version.
void index_put_(const Tensor& x, const std::vector<TensorIndex>& key, const Tensor& value);

}  // namespace crew
