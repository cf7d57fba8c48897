// Scans and reductions over lists of axes: cumsum, cumprod, prod, amax/amin, var/stddev, norm.
// Several axes are moved last and merged into one (permute + reshape), reduced there.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "crew/autograd/autocast.h"
#include "crew/autograd/function.h"
#include "crew/autograd/ops.h"
#include "crew/autograd/ops_math.h"
#include "crew/tensor/kernels/sort_scan.h"

namespace crew {
namespace {

// Sorted, distinct axes in [0, ndim); every axis when `axes` is empty.
std::vector<int64_t> reduce_axes(const std::vector<int64_t>& axes, int64_t ndim, const char* op) {
  std::vector<int64_t> out;
  if (axes.empty()) {
    for (int64_t d = 0; d < ndim; ++d) out.push_back(d);
    return out;
  }
  for (int64_t a : axes) out.push_back(normalize_axis(a, ndim));
  std::sort(out.begin(), out.end());
  CREW_CHECK(std::adjacent_find(out.begin(), out.end()) == out.end(), op, ": an axis is named twice");
  return out;
}

// x with the reduced axes moved last and merged: [kept..., prod(reduced)].
Tensor merge_reduced(const Tensor& x, const std::vector<int64_t>& red) {
  std::vector<int64_t> perm;
  Shape kept;
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (!std::binary_search(red.begin(), red.end(), d)) {
      perm.push_back(d);
      kept.push_back(x.shape()[d]);
    }
  }
  int64_t n = 1;
  for (int64_t d : red) {
    perm.push_back(d);
    n *= x.shape()[d];
  }
  kept.push_back(n);
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i) identity = identity && perm[i] == static_cast<int64_t>(i);
  return reshape(identity ? x : permute(x, perm), kept);
}

// The shape of a reduction's result: reduced axes kept as 1, or dropped.
Shape reduced_shape(const Shape& in, const std::vector<int64_t>& red, bool keepdim) {
  Shape out;
  for (int64_t d = 0; d < static_cast<int64_t>(in.size()); ++d) {
    const bool r = std::binary_search(red.begin(), red.end(), d);
    if (!r) out.push_back(in[d]);
    if (r && keepdim) out.push_back(1);
  }
  return out;
}

Tensor prod_last(const Tensor& x) {
  const int64_t a = x.dim() - 1;
  Tensor y = kernels::prod_axis(x, a, false);
  if (is_floating(x.dtype()) && autograd::should_record({&x})) {
    autograd::record(y, "prod", {x},
                     [x, a](const Tensor& g, const std::vector<bool>&) {
                       Shape kept = x.shape();
                       kept[a] = 1;
                       return std::vector<Tensor>{kernels::prod_backward(x, g.view(kept), a)};
                     },
                     {x});
  }
  return y;
}

Tensor extreme(const Tensor& x, const std::vector<int64_t>& axes, bool keepdim, bool largest,
               const char* op) {
  const std::vector<int64_t> red = reduce_axes(axes, x.dim(), op);
  Tensor m = x.dim() == 0 ? reshape(x, {1, 1}) : merge_reduced(x, red);
  CREW_CHECK(m.shape().back() > 0, op, ": the reduced axes of shape ", shape_str(x.shape()), " are empty");
  Tensor v = topk(m, 1, -1, largest).values;
  return reshape(v, reduced_shape(x.shape(), red, keepdim));
}

// While alive, autocast is off: the composite reductions (var, std, norm) are float32 ops under
// autocast, and O2's rule for gray ops (sub, mul, ...) must not cast their steps to 16 bits.
class Float32Body {
 public:
  Float32Body() {
    if (amp::autocast_enabled()) off_.emplace(amp::autocast_off());
  }

 private:
  std::optional<amp::AutocastGuard> off_;
};

Tensor sum_axes(const Tensor& x, const std::vector<int64_t>& red) {
  Tensor y = x;
  for (int64_t a : red) y = sum(y, a, true);
  return y;
}

}  // namespace

Tensor cumsum(const Tensor& x, int64_t axis) {
  if (auto in = amp::autocast_operands("cumsum", x)) return cumsum((*in)[0], axis);
  const int64_t a = normalize_axis(axis, x.dim());
  Tensor y = kernels::cumsum(x, a, false);
  if (is_floating(x.dtype()) && autograd::should_record({&x})) {
    autograd::record(y, "cumsum", {x}, [a](const Tensor& g, const std::vector<bool>&) {
      return std::vector<Tensor>{kernels::cumsum(g, a, true)};
    });
  }
  return y;
}

Tensor cumprod(const Tensor& x, int64_t axis) {
  const int64_t a = normalize_axis(axis, x.dim());
  Tensor y = kernels::cumprod(x, a);
  if (is_floating(x.dtype()) && autograd::should_record({&x})) {
    autograd::record(y, "cumprod", {x},
                     [x, a](const Tensor& g, const std::vector<bool>&) {
                       return std::vector<Tensor>{kernels::cumprod_backward(x, g, a)};
                     },
                     {x});
  }
  return y;
}

Tensor prod(const Tensor& x, const std::vector<int64_t>& axes, bool keepdim) {
  if (auto in = amp::autocast_operands("prod", x)) return prod((*in)[0], axes, keepdim);
  const std::vector<int64_t> red = reduce_axes(axes, x.dim(), "prod");
  Tensor m = x.dim() == 0 ? reshape(x, {1, 1}) : merge_reduced(x, red);
  return reshape(prod_last(m), reduced_shape(x.shape(), red, keepdim));
}

Tensor amax(const Tensor& x, const std::vector<int64_t>& axes, bool keepdim) {
  if (auto in = amp::autocast_operands("amax", x)) return amax((*in)[0], axes, keepdim);
  return extreme(x, axes, keepdim, true, "max");
}

Tensor amin(const Tensor& x, const std::vector<int64_t>& axes, bool keepdim) {
  if (auto in = amp::autocast_operands("amin", x)) return amin((*in)[0], axes, keepdim);
  return extreme(x, axes, keepdim, false, "min");
}

Tensor var(const Tensor& x, const std::vector<int64_t>& axes, bool unbiased, bool keepdim) {
  if (auto in = amp::autocast_operands("var", x)) return var((*in)[0], axes, unbiased, keepdim);
  Float32Body body;
  const std::vector<int64_t> red = reduce_axes(axes, x.dim(), "var");
  int64_t n = 1;
  for (int64_t a : red) n *= x.shape()[a];
  CREW_CHECK(n > (unbiased ? 1 : 0), "var: ", n, " elements are too few",
             unbiased ? " for the unbiased estimate" : "");
  Tensor centred = sub(x, mul(sum_axes(x, red), 1.0 / static_cast<double>(n)));
  Tensor v = mul(sum_axes(mul(centred, centred), red), 1.0 / static_cast<double>(unbiased ? n - 1 : n));
  return reshape(v, reduced_shape(x.shape(), red, keepdim));
}

Tensor stddev(const Tensor& x, const std::vector<int64_t>& axes, bool unbiased, bool keepdim) {
  if (auto in = amp::autocast_operands("std", x)) return stddev((*in)[0], axes, unbiased, keepdim);
  Float32Body body;
  return sqrt(var(x, axes, unbiased, keepdim));
}

Tensor norm(const Tensor& x, double p, const std::vector<int64_t>& axes, bool keepdim) {
  if (auto in = amp::autocast_operands("norm", x)) return norm((*in)[0], p, axes, keepdim);
  Float32Body body;
  const std::vector<int64_t> red = reduce_axes(axes, x.dim(), "norm");
  if (std::isinf(p)) return extreme(abs(x), axes, keepdim, p > 0, "norm");
  CREW_CHECK(p > 0, "norm: p must be positive or +-inf, got ", p);
  Tensor s;
  if (p == 2.0) {
    s = sqrt(sum_axes(square(x), red));
  } else if (p == 1.0) {
    s = sum_axes(abs(x), red);
  } else {
    s = pow(sum_axes(pow(abs(x), p), red), 1.0 / p);
  }
  return reshape(s, reduced_shape(x.shape(), red, keepdim));
}

}  // namespace crew
