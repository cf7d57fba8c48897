#include "crew/distributed/backends/shm/shm_reduce.h"

#include <cstring>
#include <type_traits>

#include "crew/distributed/backends/half_reduce.h"

namespace crew::dist::detail {
namespace {

struct Sum {
  template <typename V>
  V operator()(V a, V b) const {
    return a + b;
  }
};
struct Prod {
  template <typename V>
  V operator()(V a, V b) const {
    return a * b;
  }
};
struct Max {
  template <typename V>
  V operator()(V a, V b) const {
    return a > b ? a : b;
  }
};
struct Min {
  template <typename V>
  V operator()(V a, V b) const {
    return a < b ? a : b;
  }
};

template <typename T>
struct Vec {
  typedef T type __attribute__((vector_size(32)));
  static constexpr int64_t kLanes = 32 / sizeof(T);
};

// Two 32-byte vectors per iteration; memcpy keeps the loads unaligned-safe and compiles to
// plain vmovups.
template <typename T, typename Op>
void pair_kernel(T* dst, const T* a, const T* b, int64_t n, Op op) {
  using V = typename Vec<T>::type;
  constexpr int64_t kStep = 2 * Vec<T>::kLanes;
  int64_t i = 0;
  for (; i + kStep <= n; i += kStep) {
    V a0, a1, b0, b1;
    std::memcpy(&a0, a + i, sizeof(V));
    std::memcpy(&a1, a + i + Vec<T>::kLanes, sizeof(V));
    std::memcpy(&b0, b + i, sizeof(V));
    std::memcpy(&b1, b + i + Vec<T>::kLanes, sizeof(V));
    V r0 = op(a0, b0);
    V r1 = op(a1, b1);
    std::memcpy(dst + i, &r0, sizeof(V));
    std::memcpy(dst + i + Vec<T>::kLanes, &r1, sizeof(V));
  }
  for (; i < n; ++i) dst[i] = op(a[i], b[i]);
}

template <typename T>
void dispatch_op(T* dst, const T* a, const T* b, int64_t n, ReduceOp op) {
  switch (op) {
    case ReduceOp::SUM:
    case ReduceOp::AVG:
      return pair_kernel(dst, a, b, n, Sum{});
    case ReduceOp::PROD:
      return pair_kernel(dst, a, b, n, Prod{});
    case ReduceOp::MAX:
      return pair_kernel(dst, a, b, n, Max{});
    case ReduceOp::MIN:
      return pair_kernel(dst, a, b, n, Min{});
  }
}

}  // namespace

void reduce_pair(void* dst, const void* a, const void* b, int64_t n, DType dtype, ReduceOp op) {
  if (is_low_precision(dtype)) return half_reduce_pair(dst, a, b, n, dtype, op);
  if (dtype == DType::BOOL) {
    // Logical, on the bytes (0 or 1): SUM, AVG and MAX are "any", PROD and MIN "all".
    const bool any = op == ReduceOp::SUM || op == ReduceOp::AVG || op == ReduceOp::MAX;
    dispatch_op(static_cast<uint8_t*>(dst), static_cast<const uint8_t*>(a), static_cast<const uint8_t*>(b), n,
                any ? ReduceOp::MAX : ReduceOp::MIN);
    return;
  }
  dispatch_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) {
      dispatch_op(static_cast<T*>(dst), static_cast<const T*>(a), static_cast<const T*>(b), n, op);
    }
  });
}

void reduce_into(void* dst, const void* src, int64_t n, DType dtype, ReduceOp op) {
  reduce_pair(dst, dst, src, n, dtype, op);
}

void finish_avg(void* dst, int64_t n, DType dtype, int world) {
  if (dtype == DType::BOOL) return;  // AVG of bools is their "any" (reduce_pair)
  if (is_low_precision(dtype)) return half_divide(dst, n, dtype, world);
  dispatch_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    T* p = static_cast<T*>(dst);
    const T w = static_cast<T>(world);
    for (int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(p[i] / w);
  });
}

}  // namespace crew::dist::detail
