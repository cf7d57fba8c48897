#pragma once
// Kernels that copy elements by index (any dtype unless said): broadcasting expand, index
// selection along an axis and its gradient, take-along-axis and its gradient, the flat index
// of gather_nd, row scatter and flat put. Index tensors are int32 or int64; an index out of
// range is an IndexError naming the op, the index and the extent. New tensors on x's place.
#include <cstdint>

#include "crew/tensor/kernels/dispatch.h"
#include "crew/tensor/tensor.h"

namespace crew::kernels {

// x broadcast to `shape` (NumPy rules: x's axes align with shape's trailing ones, an extent
// 1 repeats), a contiguous copy.
Tensor expand(const Tensor& x, const Shape& shape);
// y = x with axis `axis` replaced by index's entries: y[.., j, ..] = x[.., index[j], ..];
// index 1-d, values in [-extent, extent) (negative ones count from the end).
Tensor index_select(const Tensor& x, int64_t axis, const Tensor& index);
// The gradient of index_select: zeros with extent `extent` on `axis`, g's slices added at
// index (g floating; repeated indices accumulate).
Tensor index_add(const Tensor& g, int64_t axis, const Tensor& index, int64_t extent);
// y[i] = x[i with its `axis` coordinate replaced by index[i]]; index of x's rank, equal to
// x's shape outside `axis` (the values of topk and sort, paddle.take_along_axis).
Tensor take_along(const Tensor& x, int64_t axis, const Tensor& index);
// The gradient of take_along: zeros of `shape`, g added where take_along read (g floating).
Tensor take_along_backward(const Tensor& g, int64_t axis, const Tensor& index, const Shape& shape);
// gather_nd's row numbers: index [..., k] of coordinates into the first k axes of `dims`
// -> int64 [...] of row-major positions among prod(dims[:k]) rows.
Tensor nd_linear_index(const Tensor& index, const Shape& dims);
// A copy of x with rows index[i] (axis 0) set to updates[i] (overwrite) or, when not
// overwrite, zeroed and then summed over every i naming them (Paddle's scatter).
Tensor scatter_rows(const Tensor& x, const Tensor& index, const Tensor& updates, bool overwrite);
// In place: x's element at flat position positions[i] becomes values[i] (values of x's
// dtype, positions' numel; the last write to a repeated position wins).
void put_(const Tensor& x, const Tensor& positions, const Tensor& values);

using ExpandFn = Tensor(const Tensor& x, const Shape& shape);
using IndexSelectFn = Tensor(const Tensor& x, int64_t axis, const Tensor& index);
using IndexAddFn = Tensor(const Tensor& g, int64_t axis, const Tensor& index, int64_t extent);
using TakeAlongFn = Tensor(const Tensor& x, int64_t axis, const Tensor& index);
using TakeAlongBackwardFn = Tensor(const Tensor& g, int64_t axis, const Tensor& index, const Shape& shape);
using NdLinearIndexFn = Tensor(const Tensor& index, const Shape& dims);
using ScatterRowsFn = Tensor(const Tensor& x, const Tensor& index, const Tensor& updates, bool overwrite);
using PutFn = void(const Tensor& x, const Tensor& positions, const Tensor& values);
extern KernelSlot<ExpandFn> expand_kernel;
extern KernelSlot<IndexSelectFn> index_select_kernel;
extern KernelSlot<IndexAddFn> index_add_kernel;
extern KernelSlot<TakeAlongFn> take_along_kernel;
extern KernelSlot<TakeAlongBackwardFn> take_along_backward_kernel;
extern KernelSlot<NdLinearIndexFn> nd_linear_index_kernel;
extern KernelSlot<ScatterRowsFn> scatter_rows_kernel;
extern KernelSlot<PutFn> put_kernel;

}  // namespace crew::kernels
