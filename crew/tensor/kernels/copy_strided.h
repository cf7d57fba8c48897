#pragma once
// Copies that reorder or cut a tensor's elements (any dtype): permute, a slice along one axis
// and its scatter back, concatenation. Results are new contiguous tensors on the input's place.
#include <cstdint>
#include <vector>

#include "crew/tensor/kernels/dispatch.h"
#include "crew/tensor/tensor.h"

namespace crew::kernels {

// y.shape[i] = x.shape[perm[i]]; perm a validated permutation of [0, x.dim()).
Tensor permute(const Tensor& x, const std::vector<int64_t>& perm);
// x[..., begin:end, ...] along `axis`, 0 <= begin <= end <= extent.
Tensor slice_axis(const Tensor& x, int64_t axis, int64_t begin, int64_t end);
// Zeros of `shape` with g written at [..., begin:begin + g.shape[axis], ...] along `axis`
// (the gradient of slice_axis).
Tensor slice_scatter(const Tensor& g, const Shape& shape, int64_t axis, int64_t begin);
// xs (one dtype, one place, equal outside `axis`) joined along `axis`, whose extent `out` has.
Tensor concat(const std::vector<Tensor>& xs, int64_t axis, const Shape& out);

using PermuteFn = Tensor(const Tensor& x, const std::vector<int64_t>& perm);
using SliceAxisFn = Tensor(const Tensor& x, int64_t axis, int64_t begin, int64_t end);
using SliceScatterFn = Tensor(const Tensor& g, const Shape& shape, int64_t axis, int64_t begin);
using ConcatFn = Tensor(const std::vector<Tensor>& xs, int64_t axis, const Shape& out);
extern KernelSlot<PermuteFn> permute_kernel;
extern KernelSlot<SliceAxisFn> slice_axis_kernel;
extern KernelSlot<SliceScatterFn> slice_scatter_kernel;
extern KernelSlot<ConcatFn> concat_kernel;

}  // namespace crew::kernels
