#include "crew/tensor/kernels/pointwise.h"

#include "crew/tensor/kernels/broadcast.h"

namespace crew::kernels {
namespace {

Tensor pointwise_cpu(MathOp op, const Tensor& x, double lo, double hi) {
  Tensor y = Tensor::uninitialized(x.shape(), x.dtype());
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) {
      const T* xp = x.data<T>();
      T* yp = y.data<T>();
      for (int64_t i = 0, n = x.numel(); i < n; ++i) yp[i] = PointwiseMath::forward<T>(op, xp[i], lo, hi);
    }
  });
  return y;
}

Tensor pointwise_backward_cpu(MathOp op, const Tensor& x, const Tensor& y, const Tensor& g, double lo,
                              double hi) {
  Tensor dx = Tensor::uninitialized(x.shape(), x.dtype());
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T>) {
      const T *xp = x.data<T>(), *yp = y.data<T>(), *gp = g.data<T>();
      T* dp = dx.data<T>();
      for (int64_t i = 0, n = x.numel(); i < n; ++i)
        dp[i] = PointwiseMath::backward<T>(op, xp[i], yp[i], gp[i], lo, hi);
    }
  });
  return dx;
}

}  // namespace

constinit KernelSlot<PointwiseFn> pointwise_kernel("pointwise", &pointwise_cpu);
constinit KernelSlot<PointwiseBackwardFn> pointwise_backward_kernel("pointwise_backward",
                                                                    &pointwise_backward_cpu);

Tensor pointwise(MathOp op, const Tensor& x, double lo, double hi, const char* name) {
  CREW_CHECK(x.dtype() != DType::BOOL, name, ": not defined for bool tensors (cast with astype first)");
  if (!math_op_takes_integers(op)) check_floating(x, name);
  return pointwise_kernel.get(x.place().type)(op, x, lo, hi);
}

Tensor pointwise_backward(MathOp op, const Tensor& x, const Tensor& y, const Tensor& g, double lo,
                          double hi) {
  check_floating(g, "pointwise backward");
  CREW_CHECK(
      x.shape() == g.shape() && y.shape() == g.shape() && x.dtype() == g.dtype() && y.dtype() == g.dtype(),
      "pointwise backward: x ", shape_str(x.shape()), ", y ", shape_str(y.shape()), " and gradient ",
      shape_str(g.shape()), " differ");
  check_same_place("pointwise backward", {{"x", &x}, {"y", &y}, {"grad", &g}});
  return pointwise_backward_kernel.get(x.place().type)(op, x, y, g, lo, hi);
}

}  // namespace crew::kernels
