// Views and concatenation: reshape, unsqueeze, squeeze, concat.
#include "crew/autograd/function.h"
#include "crew/autograd/ops.h"
#include "crew/tensor/kernels/copy_strided.h"

namespace crew {

Tensor reshape(const Tensor& x, const Shape& shape) {
  Tensor y = x.view(shape);
  if (autograd::should_record({&x})) {
    autograd::record(y, "reshape", {x}, [in = x.shape()](const Tensor& g, const std::vector<bool>&) {
      return std::vector<Tensor>{g.view(in)};
    });
  }
  return y;
}

Tensor unsqueeze(const Tensor& x, int64_t axis) {
  Shape s = x.shape();
  const int64_t a = normalize_axis(axis, x.dim() + 1);
  s.insert(s.begin() + a, 1);
  return reshape(x, s);
}

Tensor squeeze(const Tensor& x, int64_t axis) {
  Shape s = x.shape();
  const int64_t a = normalize_axis(axis, x.dim());
  CREW_CHECK(s[a] == 1, "squeeze: axis ", axis, " of shape ", shape_str(s), " has extent ", s[a], ", not 1");
  s.erase(s.begin() + a);
  return reshape(x, s);
}

Tensor concat(const std::vector<Tensor>& xs, int64_t axis) {
  CREW_CHECK(!xs.empty(), "concat: no tensors given");
  const Shape& first = xs[0].shape();
  const int64_t a = normalize_axis(axis, static_cast<int64_t>(first.size()));
  Shape out = first;
  out[a] = 0;
  for (const Tensor& t : xs) {
    CREW_CHECK(t.dtype() == xs[0].dtype(), "concat: dtypes differ (", dtype_name(t.dtype()), " vs ",
               dtype_name(xs[0].dtype()), ")");
    CREW_CHECK(t.dim() == static_cast<int64_t>(first.size()), "concat: ranks differ: ", shape_str(t.shape()),
               " vs ", shape_str(first));
    for (int64_t d = 0; d < t.dim(); ++d) {
      CREW_CHECK(d == a || t.shape()[d] == first[d], "concat: shapes ", shape_str(t.shape()), " and ",
                 shape_str(first), " differ outside axis ", a);
    }
    out[a] += t.shape()[a];
  }
  Tensor y = kernels::concat(xs, a, out);
  if (autograd::should_record(xs)) {
    std::vector<int64_t> extents;
    for (const Tensor& t : xs) extents.push_back(t.shape()[a]);
    autograd::record(y, "concat", xs, [a, extents](const Tensor& g, const std::vector<bool>& n) {
      std::vector<Tensor> grads(extents.size());
      int64_t begin = 0;
      for (size_t i = 0; i < extents.size(); ++i) {
        if (n[i]) grads[i] = kernels::slice_axis(g, a, begin, begin + extents[i]);
        begin += extents[i];
      }
      return grads;
    });
  }
  return y;
}

}  // namespace crew
