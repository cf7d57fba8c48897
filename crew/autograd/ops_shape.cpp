// Views and concatenation: reshape, unsqueeze, squeeze, concat.
#include <cstring>

#include "crew/autograd/function.h"
#include "crew/autograd/ops.h"

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
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < a; ++d) outer *= out[d];
  for (int64_t d = a + 1; d < static_cast<int64_t>(out.size()); ++d) inner *= out[d];
  const size_t es = dtype_size(xs[0].dtype());
  Tensor y = Tensor::uninitialized(out, xs[0].dtype());
  char* yp = static_cast<char*>(y.raw_data());
  const int64_t out_row = out[a] * inner;
  int64_t col = 0;
  std::vector<int64_t> extents;
  for (const Tensor& t : xs) {
    const int64_t row = t.shape()[a] * inner;
    const char* tp = static_cast<const char*>(t.raw_data());
    for (int64_t o = 0; o < outer; ++o) std::memcpy(yp + (o * out_row + col) * es, tp + o * row * es, row * es);
    col += row;
    extents.push_back(t.shape()[a]);
  }
  if (autograd::should_record(xs)) {
    autograd::record(y, "concat", xs, [a, outer, inner, extents, out_row, es](const Tensor& g, const std::vector<bool>& n) {
      std::vector<Tensor> grads(extents.size());
      int64_t c = 0;
      const char* gp = static_cast<const char*>(g.raw_data());
      for (size_t i = 0; i < extents.size(); ++i) {
        const int64_t row = extents[i] * inner;
        if (n[i]) {
          Shape s = g.shape();
          s[a] = extents[i];
          grads[i] = Tensor::empty(s, g.dtype());
          char* dp = static_cast<char*>(grads[i].raw_data());
          for (int64_t o = 0; o < outer; ++o) std::memcpy(dp + o * row * es, gp + (o * out_row + c) * es, row * es);
        }
        c += row;
      }
      return grads;
    });
  }
  return y;
}

}  // namespace crew
