#pragma once
// Differentiable math beyond ops.h, in Paddle's names (issue 30): pointwise functions,
// broadcasting and selection by index, ordering, scans and reductions; and the comparisons,
// logical ops and tests that return bool masks (no gradient). Axes may be negative.
//
//   Tensor y = crew::clip(crew::sqrt(x), 0.0, 1.0);
//   auto [values, indices] = crew::topk(x, 3, /*axis=*/-1);
//   Tensor m = crew::greater_than(x, Tensor::zeros({}, x.dtype()));   // bool, broadcast
#include <cstdint>
#include <vector>

#include "crew/autograd/ops_cast.h"  // cast
#include "crew/tensor/tensor.h"

namespace crew {

// ---- pointwise (float32/float64; abs, square, sign, clip also integers) ----
Tensor abs(const Tensor& x);
Tensor sqrt(const Tensor& x);
Tensor rsqrt(const Tensor& x);
Tensor square(const Tensor& x);
Tensor sin(const Tensor& x);
Tensor cos(const Tensor& x);
Tensor tanh(const Tensor& x);
Tensor sigmoid(const Tensor& x);
Tensor erf(const Tensor& x);
Tensor sign(const Tensor& x);   // gradient 0
Tensor floor(const Tensor& x);  // gradient 0
Tensor ceil(const Tensor& x);   // gradient 0
Tensor round(const Tensor& x);  // half away from zero; gradient 0
Tensor tan(const Tensor& x);
Tensor log2(const Tensor& x);
Tensor log10(const Tensor& x);
Tensor log1p(const Tensor& x);
Tensor expm1(const Tensor& x);
Tensor trunc(const Tensor& x);  // toward zero; gradient 0
Tensor asin(const Tensor& x);
Tensor acos(const Tensor& x);
Tensor atan(const Tensor& x);
Tensor sinh(const Tensor& x);
Tensor cosh(const Tensor& x);
Tensor asinh(const Tensor& x);
Tensor acosh(const Tensor& x);
Tensor atanh(const Tensor& x);
Tensor clip(const Tensor& x, double min, double max);

// ---- broadcasting and selection ----
Tensor expand(const Tensor& x, const Shape& shape);  // Paddle's expand and broadcast_to
// Paddle's tile: repeats per axis (shorter lists repeat the trailing axes).
Tensor tile(const Tensor& x, const std::vector<int64_t>& repeats);
// cond ? x : y with the three broadcast together; cond is bool.
Tensor where(const Tensor& cond, const Tensor& x, const Tensor& y);
// Along axis, the entries named by a 1-d int index (Paddle's index_select and gather).
Tensor index_select(const Tensor& x, const Tensor& index, int64_t axis = 0);
Tensor take_along_axis(const Tensor& x, const Tensor& index, int64_t axis);
// index [..., k] addresses x's first k axes: result [..., x.shape[k:]...].
Tensor gather_nd(const Tensor& x, const Tensor& index);
// The elements of x where mask (bool, broadcast with x) is true, as a 1-d tensor.
Tensor masked_select(const Tensor& x, const Tensor& mask);
// Paddle's scatter: rows index[i] of x become updates[i] (overwrite) or their sum.
Tensor scatter(const Tensor& x, const Tensor& index, const Tensor& updates, bool overwrite = true);
Tensor flip(const Tensor& x, const std::vector<int64_t>& axes);
// Paddle's roll: shifts per axis; with no axes, of the flattened tensor (shape kept).
Tensor roll(const Tensor& x, const std::vector<int64_t>& shifts, const std::vector<int64_t>& axes);
std::vector<Tensor> unbind(const Tensor& x, int64_t axis = 0);

// ---- ordering (values differentiable, indices int64) ----
struct ValuesIndices {
  Tensor values, indices;
};
ValuesIndices topk(const Tensor& x, int64_t k, int64_t axis = -1, bool largest = true);
ValuesIndices sort(const Tensor& x, int64_t axis = -1, bool descending = false);

// ---- scans and reductions (axes empty: every axis) ----
Tensor cumsum(const Tensor& x, int64_t axis);
Tensor cumprod(const Tensor& x, int64_t axis);
Tensor prod(const Tensor& x, const std::vector<int64_t>& axes, bool keepdim = false);
Tensor amax(const Tensor& x, const std::vector<int64_t>& axes, bool keepdim = false);
Tensor amin(const Tensor& x, const std::vector<int64_t>& axes, bool keepdim = false);
// Variance and standard deviation (divided by n - 1 when unbiased).
Tensor var(const Tensor& x, const std::vector<int64_t>& axes, bool unbiased = true, bool keepdim = false);
Tensor stddev(const Tensor& x, const std::vector<int64_t>& axes, bool unbiased = true, bool keepdim = false);
// The p-norm over axes (p may be +-infinity; 2 is Frobenius over two axes).
Tensor norm(const Tensor& x, double p, const std::vector<int64_t>& axes, bool keepdim = false);

// ---- bool masks (broadcasting, no gradient) ----
Tensor equal(const Tensor& a, const Tensor& b);
Tensor not_equal(const Tensor& a, const Tensor& b);
Tensor less_than(const Tensor& a, const Tensor& b);
Tensor less_equal(const Tensor& a, const Tensor& b);
Tensor greater_than(const Tensor& a, const Tensor& b);
Tensor greater_equal(const Tensor& a, const Tensor& b);
Tensor logical_and(const Tensor& a, const Tensor& b);
Tensor logical_or(const Tensor& a, const Tensor& b);
Tensor logical_xor(const Tensor& a, const Tensor& b);
Tensor logical_not(const Tensor& x);
Tensor isnan(const Tensor& x);
Tensor isinf(const Tensor& x);
Tensor isfinite(const Tensor& x);
Tensor isclose(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-8,
               bool equal_nan = false);
bool allclose(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-8,
              bool equal_nan = false);
// Same shape and every element equal.
bool equal_all(const Tensor& a, const Tensor& b);
// Whether every (any) element is nonzero.
bool all(const Tensor& x);
bool any(const Tensor& x);

}  // namespace crew
