// Reductions: sum, mean (all elements or along an axis), argmax.
#include "crew/autograd/function.h"
#include "crew/autograd/ops.h"
#include "crew/tensor/kernels/broadcast.h"

namespace crew {
namespace {

Tensor reduce_axis(const Tensor& x, int64_t a, bool keepdim, double scale) {
  const AxisSplit p = split_at_axis(x.shape(), a);
  Shape out = x.shape();
  if (keepdim) {
    out[a] = 1;
  } else {
    out.erase(out.begin() + a);
  }
  Tensor y = Tensor::zeros(out, x.dtype());
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T>) {
      const T* xp = x.data<T>();
      T* yp = y.data<T>();
      for (int64_t o = 0; o < p.outer; ++o) {
        T* dst = yp + o * p.inner;
        for (int64_t e = 0; e < p.extent; ++e) {
          const T* src = xp + (o * p.extent + e) * p.inner;
          for (int64_t i = 0; i < p.inner; ++i) dst[i] += src[i];
        }
        for (int64_t i = 0; i < p.inner; ++i) dst[i] *= static_cast<T>(scale);
      }
    }
  });
  return y;
}

// Broadcasts g (the reduced shape with the axis kept as 1) back to `shape`, times scale.
Tensor expand_back(const Tensor& g, const Shape& shape, double scale) {
  Tensor ones = Tensor::full(shape, scale, g.dtype());
  return kernels::binary(kernels::BinaryOp::MUL, ones, g, "reduce backward");
}

Tensor sum_all(const Tensor& x, double scale, const char* name) {
  kernels::check_floating(x, name);
  Tensor flat = x.view({x.numel()});
  Tensor y = x.numel() == 0 ? Tensor::zeros({}, x.dtype()) : reduce_axis(flat, 0, false, scale);
  if (autograd::should_record({&x})) {
    autograd::record(y, name, {x}, [shape = x.shape(), scale](const Tensor& g, const std::vector<bool>&) {
      return std::vector<Tensor>{expand_back(g, shape, scale)};
    });
  }
  return y;
}

Tensor sum_axis(const Tensor& x, int64_t axis, bool keepdim, bool average, const char* name) {
  kernels::check_floating(x, name);
  const int64_t a = normalize_axis(axis, x.dim());
  const double scale = average ? 1.0 / static_cast<double>(x.shape()[a]) : 1.0;
  Tensor y = reduce_axis(x, a, keepdim, scale);
  if (autograd::should_record({&x})) {
    autograd::record(y, name, {x}, [shape = x.shape(), a, scale](const Tensor& g, const std::vector<bool>&) {
      Shape kept = shape;
      kept[a] = 1;
      return std::vector<Tensor>{expand_back(g.view(kept), shape, scale)};
    });
  }
  return y;
}

}  // namespace

Tensor sum(const Tensor& x) { return sum_all(x, 1.0, "sum"); }
Tensor mean(const Tensor& x) {
  CREW_CHECK(x.numel() > 0, "mean: tensor of shape ", shape_str(x.shape()), " is empty");
  return sum_all(x, 1.0 / static_cast<double>(x.numel()), "mean");
}
Tensor sum(const Tensor& x, int64_t axis, bool keepdim) { return sum_axis(x, axis, keepdim, false, "sum"); }
Tensor mean(const Tensor& x, int64_t axis, bool keepdim) { return sum_axis(x, axis, keepdim, true, "mean"); }

Tensor argmax(const Tensor& x, int64_t axis) {
  CREW_CHECK(x.dim() >= 1, "argmax: tensor of shape ", shape_str(x.shape()), " has no axis");
  const int64_t a = normalize_axis(axis, x.dim());
  const AxisSplit p = split_at_axis(x.shape(), a);
  CREW_CHECK(p.extent > 0, "argmax: axis ", a, " of shape ", shape_str(x.shape()), " is empty");
  Shape out = x.shape();
  out.erase(out.begin() + a);
  Tensor y = Tensor::empty(out, DType::INT64);
  int64_t* yp = y.data<int64_t>();
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* xp = static_cast<const T*>(x.raw_data());
    for (int64_t o = 0; o < p.outer; ++o) {
      for (int64_t i = 0; i < p.inner; ++i) {
        int64_t best = 0;
        T best_v = xp[o * p.extent * p.inner + i];
        for (int64_t e = 1; e < p.extent; ++e) {
          const T v = xp[(o * p.extent + e) * p.inner + i];
          if (v > best_v) {
            best_v = v;
            best = e;
          }
        }
        yp[o * p.inner + i] = best;
      }
    }
  });
  return y;
}

}  // namespace crew
