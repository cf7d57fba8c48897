// Broadcasting and selection by index: expand, tile, where, index_select, take_along_axis,
// gather_nd, masked_select, scatter, flip, roll, unbind, topk, sort. Each backward sends the
// gradient to where the forward read (index_add, take_along_backward, sum_to).
#include <numeric>

#include "crew/autograd/autocast.h"
#include "crew/autograd/function.h"
#include "crew/autograd/ops.h"
#include "crew/autograd/ops_math.h"
#include "crew/tensor/kernels/broadcast.h"
#include "crew/tensor/kernels/compare.h"
#include "crew/tensor/kernels/gather.h"
#include "crew/tensor/kernels/sort_scan.h"

namespace crew {
namespace {

Tensor index_tensor(const std::vector<int64_t>& v, const Place& place) {
  return Tensor::from_vector(v).to(place);
}

}  // namespace

Tensor expand(const Tensor& x, const Shape& shape) {
  Shape target = shape;
  // Paddle's -1: keep the input's extent.
  const size_t lead = target.size() >= x.shape().size() ? target.size() - x.shape().size() : 0;
  for (size_t d = lead; d < target.size(); ++d) {
    if (target[d] == -1) target[d] = x.shape()[d - lead];
  }
  Tensor y = kernels::expand(x, target);
  if (autograd::should_record({&x})) {
    autograd::record(y, "expand", {x}, [in = x.shape()](const Tensor& g, const std::vector<bool>&) {
      return std::vector<Tensor>{kernels::sum_to(g, in)};
    });
  }
  return y;
}

Tensor tile(const Tensor& x, const std::vector<int64_t>& repeats) {
  const size_t r = std::max(repeats.size(), x.shape().size());
  Shape dims(r - x.shape().size(), 1);
  dims.insert(dims.end(), x.shape().begin(), x.shape().end());
  std::vector<int64_t> reps(r - repeats.size(), 1);
  reps.insert(reps.end(), repeats.begin(), repeats.end());
  Shape split, grown, out;
  for (size_t d = 0; d < r; ++d) {
    CREW_CHECK(reps[d] >= 1, "tile: repeat_times must be >= 1, got ", reps[d]);
    split.insert(split.end(), {1, dims[d]});
    grown.insert(grown.end(), {reps[d], dims[d]});
    out.push_back(reps[d] * dims[d]);
  }
  return reshape(expand(reshape(x, split), grown), out);
}

Tensor where(const Tensor& cond, const Tensor& x, const Tensor& y) {
  if (auto in = amp::autocast_operands("where", x, y)) return where(cond, (*in)[0], (*in)[1]);
  Shape out = kernels::broadcast_shapes(kernels::broadcast_shapes(cond.shape(), x.shape(), "where"),
                                        y.shape(), "where");
  CREW_CHECK(x.dtype() == y.dtype(), "where: x is ", dtype_name(x.dtype()), ", y ", dtype_name(y.dtype()));
  auto grow = [&out](const Tensor& t) { return t.shape() == out ? t : kernels::expand(t, out); };
  Tensor c = grow(cond);
  Tensor z = kernels::where(c, grow(x), grow(y));
  if (autograd::should_record({&x, &y})) {
    autograd::record(
        z, "where", {x, y}, [c, sx = x.shape(), sy = y.shape()](const Tensor& g, const std::vector<bool>& n) {
          Tensor zeros = Tensor::zeros(g.shape(), g.dtype(), g.place());
          return std::vector<Tensor>{n[0] ? kernels::sum_to(kernels::where(c, g, zeros), sx) : Tensor(),
                                     n[1] ? kernels::sum_to(kernels::where(c, zeros, g), sy) : Tensor()};
        });
  }
  return z;
}

Tensor index_select(const Tensor& x, const Tensor& index, int64_t axis) {
  CREW_CHECK(x.dim() >= 1, "index_select: x of shape ", shape_str(x.shape()), " has no axis");
  const int64_t a = normalize_axis(axis, x.dim());
  Tensor y = kernels::index_select(x, a, index);
  if (autograd::should_record({&x})) {
    autograd::record(y, "index_select", {x},
                     [index, a, n = x.shape()[a]](const Tensor& g, const std::vector<bool>&) {
                       return std::vector<Tensor>{kernels::index_add(g, a, index, n)};
                     });
  }
  return y;
}

Tensor take_along_axis(const Tensor& x, const Tensor& index, int64_t axis) {
  const int64_t a = normalize_axis(axis, x.dim());
  Tensor y = kernels::take_along(x, a, index);
  if (autograd::should_record({&x})) {
    autograd::record(y, "take_along_axis", {x},
                     [index, a, in = x.shape()](const Tensor& g, const std::vector<bool>&) {
                       return std::vector<Tensor>{kernels::take_along_backward(g, a, index, in)};
                     });
  }
  return y;
}

Tensor gather_nd(const Tensor& x, const Tensor& index) {
  Tensor rows = kernels::nd_linear_index(index, x.shape());
  const size_t k = static_cast<size_t>(index.shape().back());
  Shape lead(x.shape().begin(), x.shape().begin() + k), rest(x.shape().begin() + k, x.shape().end());
  Shape flat{shape_numel(lead)};
  flat.insert(flat.end(), rest.begin(), rest.end());
  Shape out(index.shape().begin(), index.shape().end() - 1);
  out.insert(out.end(), rest.begin(), rest.end());
  return reshape(index_select(reshape(x, flat), rows.view({rows.numel()}), 0), out);
}

Tensor masked_select(const Tensor& x, const Tensor& mask) {
  CREW_CHECK(mask.dtype() == DType::BOOL, "masked_select: mask must be a bool tensor, got ",
             dtype_name(mask.dtype()));
  const Shape out = kernels::broadcast_shapes(x.shape(), mask.shape(), "masked_select");
  Tensor m = mask.shape() == out ? mask : kernels::expand(mask, out);
  Tensor xs = x.shape() == out ? x : expand(x, out);
  return index_select(reshape(xs, {-1}), kernels::nonzero(m), 0);
}

Tensor scatter(const Tensor& x, const Tensor& index, const Tensor& updates, bool overwrite) {
  Tensor y = kernels::scatter_rows(x, index, updates, overwrite);
  if (autograd::should_record({&x, &updates})) {
    autograd::record(y, "scatter", {x, updates},
                     [index, su = updates.shape()](const Tensor& g, const std::vector<bool>& n) {
                       Tensor zeros = Tensor::zeros(su, g.dtype(), g.place());
                       return std::vector<Tensor>{
                           n[0] ? kernels::scatter_rows(g, index, zeros, true) : Tensor(),
                           n[1] ? kernels::index_select(g, 0, index) : Tensor()};
                     });
  }
  return y;
}

Tensor flip(const Tensor& x, const std::vector<int64_t>& axes) {
  Tensor y = x;
  for (int64_t axis : axes) {
    const int64_t a = normalize_axis(axis, x.dim());
    std::vector<int64_t> idx(static_cast<size_t>(x.shape()[a]));
    std::iota(idx.rbegin(), idx.rend(), 0);
    y = index_select(y, index_tensor(idx, x.place()), a);
  }
  return y;
}

Tensor roll(const Tensor& x, const std::vector<int64_t>& shifts, const std::vector<int64_t>& axes) {
  if (axes.empty()) {
    CREW_CHECK(shifts.size() == 1, "roll: without axes, shifts must be one number, got ", shifts.size());
    return reshape(roll(reshape(x, {-1}), shifts, {0}), x.shape());
  }
  CREW_CHECK(shifts.size() == axes.size(), "roll: ", shifts.size(), " shifts for ", axes.size(), " axes");
  Tensor y = x;
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t a = normalize_axis(axes[i], x.dim());
    const int64_t n = x.shape()[a];
    if (n == 0) continue;
    std::vector<int64_t> idx(static_cast<size_t>(n));
    for (int64_t j = 0; j < n; ++j) idx[j] = (((j - shifts[i]) % n) + n) % n;
    y = index_select(y, index_tensor(idx, x.place()), a);
  }
  return y;
}

std::vector<Tensor> unbind(const Tensor& x, int64_t axis) {
  const int64_t a = normalize_axis(axis, x.dim());
  std::vector<Tensor> out;
  for (int64_t i = 0; i < x.shape()[a]; ++i) out.push_back(squeeze(slice(x, a, i, i + 1), a));
  return out;
}

ValuesIndices topk(const Tensor& x, int64_t k, int64_t axis, bool largest) {
  if (auto in = amp::autocast_operands("topk", x)) return topk((*in)[0], k, axis, largest);
  CREW_CHECK(x.dim() >= 1, "topk: x of shape ", shape_str(x.shape()), " has no axis");
  const int64_t a = normalize_axis(axis, x.dim());
  Tensor idx = kernels::sort_indices(x, a, k, largest);
  return {take_along_axis(x, idx, a), idx};
}

ValuesIndices sort(const Tensor& x, int64_t axis, bool descending) {
  if (auto in = amp::autocast_operands("sort", x)) return sort((*in)[0], axis, descending);
  CREW_CHECK(x.dim() >= 1, "sort: x of shape ", shape_str(x.shape()), " has no axis");
  const int64_t a = normalize_axis(axis, x.dim());
  return topk(x, x.shape()[a], a, descending);
}

}  // namespace crew
