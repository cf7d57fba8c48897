#include "crew/distributed/backends/gloo/gloo_reduce.h"

#include <algorithm>
#include <cstdint>

#include "crew/distributed/backends/half_reduce.h"

namespace crew::dist::detail {

namespace {

template <typename T, typename Op>
void apply(void* c, const void* a, const void* b, size_t n, Op op) {
  T* out = static_cast<T*>(c);
  const T* x = static_cast<const T*>(a);
  const T* y = static_cast<const T*>(b);
  for (size_t i = 0; i < n; ++i) out[i] = op(x[i], y[i]);
}

template <typename T>
GlooReduceFn typed_fn(ReduceOp op) {
  switch (op) {
    case ReduceOp::SUM:
    case ReduceOp::AVG:
      return [](void* c, const void* a, const void* b, size_t n) {
        apply<T>(c, a, b, n, [](T x, T y) { return static_cast<T>(x + y); });
      };
    case ReduceOp::PROD:
      return [](void* c, const void* a, const void* b, size_t n) {
        apply<T>(c, a, b, n, [](T x, T y) { return static_cast<T>(x * y); });
      };
    case ReduceOp::MAX:
      return [](void* c, const void* a, const void* b, size_t n) {
        apply<T>(c, a, b, n, [](T x, T y) { return std::max(x, y); });
      };
    case ReduceOp::MIN:
      return [](void* c, const void* a, const void* b, size_t n) {
        apply<T>(c, a, b, n, [](T x, T y) { return std::min(x, y); });
      };
  }
  return nullptr;
}

}  // namespace

GlooReduceFn gloo_reduce_fn(ReduceOp op, DType dtype) {
  if (is_low_precision(dtype)) {
    return [op, dtype](void* c, const void* a, const void* b, size_t n) {
      half_reduce_pair(c, a, b, static_cast<int64_t>(n), dtype, op);
    };
  }
  return dispatch_dtype(dtype, [&](auto tag) -> GlooReduceFn { return typed_fn<decltype(tag)>(op); });
}

void divide_in_place(Tensor& tensor, int divisor) {
  if (is_low_precision(tensor.dtype()))
    return half_divide(tensor.raw_data(), tensor.numel(), tensor.dtype(), divisor);
  dispatch_dtype(tensor.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* p = static_cast<T*>(tensor.raw_data());
    const T d = static_cast<T>(divisor);
    const int64_t n = tensor.numel();
    for (int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(p[i] / d);
  });
}

}  // namespace crew::dist::detail
