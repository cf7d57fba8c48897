// x[key] as a chain of differentiable ops, one per item (slice, index_select, reshape), and
// x[key] = value as the same chain over x's element positions followed by one put.
#include "crew/autograd/indexing.h"

#include "crew/autograd/autograd.h"
#include "crew/autograd/ops.h"
#include "crew/autograd/ops_math.h"
#include "crew/tensor/kernels/compare.h"
#include "crew/tensor/kernels/gather.h"

namespace crew {
namespace {

struct SliceRange {
  int64_t start, step, count;
};

// Python's slice.indices(n) and the resulting length.
SliceRange resolve(const TensorIndex& s, int64_t n) {
  CREW_CHECK(s.step != 0, "index: slice step cannot be zero");
  const int64_t step = s.step;
  auto clamp = [&](std::optional<int64_t> v, int64_t dflt) {
    if (!v) return dflt;
    int64_t i = *v < 0 ? *v + n : *v;
    if (step > 0) return std::clamp<int64_t>(i, 0, n);
    return std::clamp<int64_t>(i, -1, n - 1);
  };
  const int64_t start = clamp(s.start, step > 0 ? 0 : n - 1);
  const int64_t stop = clamp(s.stop, step > 0 ? n : -1);
  int64_t count = 0;
  if (step > 0 && stop > start) count = (stop - start - 1) / step + 1;
  if (step < 0 && start > stop) count = (start - stop - 1) / (-step) + 1;
  return {start, step, count};
}

int64_t consumed_axes(const TensorIndex& item) {
  switch (item.kind) {
    case TensorIndex::Kind::INT:
    case TensorIndex::Kind::SLICE:
      return 1;
    case TensorIndex::Kind::TENSOR:
      return item.tensor.dtype() == DType::BOOL ? std::max<int64_t>(item.tensor.dim(), 1) : 1;
    default:
      return 0;
  }
}

// The key with its Ellipsis (or the missing trailing axes) spelled out as full slices.
std::vector<TensorIndex> expand_key(const std::vector<TensorIndex>& key, int64_t ndim) {
  int64_t used = 0, ellipses = 0, tensors = 0;
  for (const auto& item : key) {
    used += consumed_axes(item);
    ellipses += item.kind == TensorIndex::Kind::ELLIPSIS;
    tensors += item.kind == TensorIndex::Kind::TENSOR;
  }
  CREW_CHECK_T(IndexError, ellipses <= 1, "index: an index can only have a single ellipsis ('...')");
  CREW_CHECK_T(IndexError, tensors <= 1, "index: crew takes at most one tensor in an index, got ", tensors);
  CREW_CHECK_T(IndexError, used <= ndim, "index: too many indices for a tensor of ", ndim, " dimensions (",
               used, " given)");
  std::vector<TensorIndex> out;
  for (const auto& item : key) {
    if (item.kind == TensorIndex::Kind::ELLIPSIS) {
      for (int64_t i = 0; i < ndim - used; ++i) out.push_back(TensorIndex::slice({}, {}));
    } else {
      out.push_back(item);
    }
  }
  if (ellipses == 0) {
    for (int64_t i = 0; i < ndim - used; ++i) out.push_back(TensorIndex::slice({}, {}));
  }
  return out;
}

Tensor arange_index(int64_t start, int64_t step, int64_t count, const Place& place) {
  std::vector<int64_t> v(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) v[i] = start + i * step;
  return Tensor::from_vector(v).to(place);
}

// Axis a of y selected by a tensor item; returns y and the number of result axes it made.
Tensor select_by_tensor(const Tensor& y, int64_t a, const Tensor& t, int64_t* made) {
  const Shape& s = y.shape();
  if (t.dtype() == DType::BOOL) {
    const int64_t k = std::max<int64_t>(t.dim(), 1);
    const Shape covered(s.begin() + a, s.begin() + a + k);
    CREW_CHECK_T(IndexError, t.dim() == 0 ? covered == Shape{1} : t.shape() == covered,
                 "index: a mask of shape ", shape_str(t.shape()), " does not match the indexed axes ",
                 shape_str(covered));
    Shape merged(s.begin(), s.begin() + a);
    merged.push_back(shape_numel(covered));
    merged.insert(merged.end(), s.begin() + a + k, s.end());
    *made = 1;
    return index_select(reshape(y, merged), kernels::nonzero(t).to(y.place()), a);
  }
  CREW_CHECK_T(IndexError, t.dtype() == DType::INT64 || t.dtype() == DType::INT32,
               "index: a tensor index must be int32, int64 or bool, got ", dtype_name(t.dtype()));
  Tensor picked = index_select(y, reshape(t, {t.numel()}), a);
  Shape out(s.begin(), s.begin() + a);
  out.insert(out.end(), t.shape().begin(), t.shape().end());
  out.insert(out.end(), s.begin() + a + 1, s.end());
  *made = t.dim();
  return reshape(picked, out);
}

}  // namespace

Tensor index(const Tensor& x, const std::vector<TensorIndex>& key) {
  Tensor y = x;
  int64_t a = 0;  // the axis of y the next item applies to
  for (const TensorIndex& item : expand_key(key, x.dim())) {
    switch (item.kind) {
      case TensorIndex::Kind::INT: {
        const int64_t n = y.shape()[a];
        CREW_CHECK_T(IndexError, item.index >= -n && item.index < n, "index ", item.index,
                     " is out of range for axis ", a, " of size ", n);
        const int64_t i = item.index < 0 ? item.index + n : item.index;
        y = squeeze(slice(y, a, i, i + 1), a);
        break;
      }
      case TensorIndex::Kind::SLICE: {
        const SliceRange r = resolve(item, y.shape()[a]);
        if (r.step == 1) {
          if (r.start != 0 || r.count != y.shape()[a]) y = slice(y, a, r.start, r.start + r.count);
        } else {
          y = index_select(y, arange_index(r.start, r.step, r.count, y.place()), a);
        }
        ++a;
        break;
      }
      case TensorIndex::Kind::NONE:
        y = unsqueeze(y, a);
        ++a;
        break;
      case TensorIndex::Kind::TENSOR: {
        int64_t made = 0;
        y = select_by_tensor(y, a, item.tensor, &made);
        a += made;
        break;
      }
      case TensorIndex::Kind::ELLIPSIS:
        break;
    }
  }
  return y.is_same(x) ? reshape(x, x.shape()) : y;
}

void index_put_(const Tensor& x, const std::vector<TensorIndex>& key, const Tensor& value) {
  Tensor positions;
  {
    NoGradGuard no_grad;
    Tensor all = Tensor::arange(x.numel(), DType::INT64).to(x.place());
    positions = index(all.view(x.shape()), key);
  }
  Tensor v = value.dtype() == x.dtype() ? value : value.to(x.dtype());
  if (v.place() != x.place()) v = v.to(x.place());  // a host scalar written into device memory
  if (v.shape() != positions.shape()) v = kernels::expand(v, positions.shape());
  kernels::put_(x, positions.view({positions.numel()}), v.view({v.numel()}));
  x.bump_version();
}

}  // namespace crew
