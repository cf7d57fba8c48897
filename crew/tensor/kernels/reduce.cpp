#include "crew/tensor/kernels/reduce.h"

#include "crew/tensor/kernels/broadcast.h"

namespace crew::kernels {
namespace {

Shape reduced_shape(const Shape& in, int64_t a, bool keepdim) {
  Shape out = in;
  if (keepdim) {
    out[a] = 1;
  } else {
    out.erase(out.begin() + a);
  }
  return out;
}

Tensor sum_axis_cpu(const Tensor& x, int64_t a, bool keepdim, double scale) {
  const AxisSplit p = split_at_axis(x.shape(), a);
  Tensor y = Tensor::zeros(reduced_shape(x.shape(), a, keepdim), x.dtype());
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

Tensor argmax_cpu(const Tensor& x, int64_t a) {
  const AxisSplit p = split_at_axis(x.shape(), a);
  Tensor y = Tensor::empty(reduced_shape(x.shape(), a, false), DType::INT64);
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

}  // namespace

constinit KernelSlot<SumAxisFn> sum_axis_kernel("sum_axis", &sum_axis_cpu);
constinit KernelSlot<ArgmaxFn> argmax_kernel("argmax", &argmax_cpu);

Tensor sum_axis(const Tensor& x, int64_t axis, bool keepdim, double scale) {
  check_floating(x, "sum_axis");
  CREW_CHECK(axis >= 0 && axis < x.dim(), "sum_axis: axis ", axis, " out of range for shape ",
             shape_str(x.shape()));
  return sum_axis_kernel.get(x.place().type)(x, axis, keepdim, scale);
}

Tensor argmax(const Tensor& x, int64_t axis) {
  CREW_CHECK(axis >= 0 && axis < x.dim() && x.shape()[axis] > 0, "argmax: axis ", axis, " of shape ",
             shape_str(x.shape()), " is out of range or empty");
  return argmax_kernel.get(x.place().type)(x, axis);
}

}  // namespace crew::kernels
