#pragma once
// Kernels that order or scan along one axis: sort indices (sort, argsort, topk), cumulative
// sum and product, product and the gradients. axis in [0, x.dim()); new tensors on x's place.
#include <cstdint>

#include "crew/tensor/kernels/dispatch.h"
#include "crew/tensor/tensor.h"

namespace crew::kernels {

// int64 positions along `axis` of the first k elements of each line in sorted order
// (ascending, or descending), ties in their original order; the axis' extent becomes k
// (0 <= k <= extent). NaN sorts as the largest value. Not for bool tensors.
Tensor sort_indices(const Tensor& x, int64_t axis, int64_t k, bool descending);
// Running sum along `axis` (from the end when reverse); any numeric dtype.
Tensor cumsum(const Tensor& x, int64_t axis, bool reverse);
// Running product along `axis`; any numeric dtype.
Tensor cumprod(const Tensor& x, int64_t axis);
// The gradient of cumprod: g and x of one shape, floating; exact where x holds zeros.
Tensor cumprod_backward(const Tensor& x, const Tensor& g, int64_t axis);
// Product along `axis` (kept as extent 1 when keepdim); any numeric dtype.
Tensor prod_axis(const Tensor& x, int64_t axis, bool keepdim);
// The gradient of prod_axis: dx = g * (product of the other elements of x's line), exact
// where x holds zeros; g of x's shape with `axis` of extent 1, floating.
Tensor prod_backward(const Tensor& x, const Tensor& g, int64_t axis);

using SortIndicesFn = Tensor(const Tensor& x, int64_t axis, int64_t k, bool descending);
using CumsumFn = Tensor(const Tensor& x, int64_t axis, bool reverse);
using CumprodFn = Tensor(const Tensor& x, int64_t axis);
using CumprodBackwardFn = Tensor(const Tensor& x, const Tensor& g, int64_t axis);
using ProdAxisFn = Tensor(const Tensor& x, int64_t axis, bool keepdim);
using ProdBackwardFn = Tensor(const Tensor& x, const Tensor& g, int64_t axis);
extern KernelSlot<SortIndicesFn> sort_indices_kernel;
extern KernelSlot<CumsumFn> cumsum_kernel;
extern KernelSlot<CumprodFn> cumprod_kernel;
extern KernelSlot<CumprodBackwardFn> cumprod_backward_kernel;
extern KernelSlot<ProdAxisFn> prod_axis_kernel;
extern KernelSlot<ProdBackwardFn> prod_backward_kernel;

}  // namespace crew::kernels
