#include "crew/tensor/kernels/elementwise.h"

#include <cmath>

#include "crew/tensor/kernels/broadcast.h"

namespace crew::kernels {
namespace {

template <typename F>
Tensor map_unary(const Tensor& x, F f) {
  Tensor y = Tensor::uninitialized(x.shape(), x.dtype());
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T>) {
      const T* xp = x.data<T>();
      T* yp = y.data<T>();
      for (int64_t i = 0, n = x.numel(); i < n; ++i) yp[i] = static_cast<T>(f(xp[i]));
    }
  });
  return y;
}

Tensor unary_cpu(UnaryOp op, const Tensor& x, double exponent) {
  switch (op) {
    case UnaryOp::EXP:
      return map_unary(x, [](auto v) { return std::exp(v); });
    case UnaryOp::LOG:
      return map_unary(x, [](auto v) { return std::log(v); });
    case UnaryOp::POW:
      return map_unary(x, [exponent](auto v) { return std::pow(v, exponent); });
    case UnaryOp::POW_GRAD:
      return map_unary(x, [exponent](auto v) { return exponent * std::pow(v, exponent - 1); });
  }
  CREW_INTERNAL_ASSERT(false, "unary: unknown op ", static_cast<int>(op));
  return Tensor();
}

}  // namespace

constinit KernelSlot<UnaryFn> unary_kernel("unary", &unary_cpu);

Tensor unary(UnaryOp op, const Tensor& x, double exponent, const char* name) {
  check_floating(x, name);
  return unary_kernel.get(x.place().type)(op, x, exponent);
}

}  // namespace crew::kernels
