#include "crew/tensor/kernels/compare.h"

#include <cmath>
#include <type_traits>
#include <vector>

namespace crew::kernels {
namespace {

template <typename T>
bool compare_one(CompareOp op, T a, T b) {
  switch (op) {
    case CompareOp::EQ:
      return a == b;
    case CompareOp::NE:
      return a != b;
    case CompareOp::LT:
      return a < b;
    case CompareOp::LE:
      return a <= b;
    case CompareOp::GT:
      return a > b;
    case CompareOp::GE:
      return a >= b;
    case CompareOp::AND:
      return a != T(0) && b != T(0);
    case CompareOp::OR:
      return a != T(0) || b != T(0);
    case CompareOp::XOR:
      return (a != T(0)) != (b != T(0));
  }
  return false;
}

Tensor compare_cpu(CompareOp op, const Tensor& a, const Tensor& b) {
  Tensor y = Tensor::uninitialized(a.shape(), DType::BOOL);
  bool* yp = y.data<bool>();
  dispatch_dtype(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T *ap = a.data<T>(), *bp = b.data<T>();
    for (int64_t i = 0, n = a.numel(); i < n; ++i) yp[i] = compare_one<T>(op, ap[i], bp[i]);
  });
  return y;
}

Tensor test_cpu(TestOp op, const Tensor& x) {
  Tensor y = Tensor::uninitialized(x.shape(), DType::BOOL);
  bool* yp = y.data<bool>();
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* xp = x.data<T>();
    for (int64_t i = 0, n = x.numel(); i < n; ++i) {
      bool r = false;
      if (op == TestOp::NOT) {
        r = xp[i] == T(0);
      } else if constexpr (std::is_floating_point_v<T>) {
        r = op == TestOp::ISNAN   ? std::isnan(xp[i])
            : op == TestOp::ISINF ? std::isinf(xp[i])
                                  : std::isfinite(xp[i]);
      } else {
        r = op == TestOp::ISFINITE;
      }
      yp[i] = r;
    }
  });
  return y;
}

Tensor isclose_cpu(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
  Tensor y = Tensor::uninitialized(a.shape(), DType::BOOL);
  bool* yp = y.data<bool>();
  dispatch_dtype(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T>) {
      const T *ap = a.data<T>(), *bp = b.data<T>();
      for (int64_t i = 0, n = a.numel(); i < n; ++i) {
        const double x = ap[i], z = bp[i];
        if (std::isnan(x) || std::isnan(z)) {
          yp[i] = equal_nan && std::isnan(x) && std::isnan(z);
        } else {
          yp[i] = x == z || std::fabs(x - z) <= atol + rtol * std::fabs(z);
        }
      }
    }
  });
  return y;
}

Tensor where_cpu(const Tensor& cond, const Tensor& x, const Tensor& y) {
  Tensor out = Tensor::uninitialized(x.shape(), x.dtype());
  const bool* c = cond.data<bool>();
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T *xp = x.data<T>(), *yp = y.data<T>();
    T* op = out.data<T>();
    for (int64_t i = 0, n = x.numel(); i < n; ++i) op[i] = c[i] ? xp[i] : yp[i];
  });
  return out;
}

Tensor nonzero_cpu(const Tensor& x) {
  std::vector<int64_t> positions;
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* xp = x.data<T>();
    for (int64_t i = 0, n = x.numel(); i < n; ++i) {
      if (xp[i] != T(0)) positions.push_back(i);
    }
  });
  return Tensor::from_vector(positions);
}

void check_same(const char* op, const Tensor& a, const Tensor& b) {
  CREW_CHECK(a.shape() == b.shape(), op, ": shapes ", shape_str(a.shape()), " and ", shape_str(b.shape()),
             " differ");
  CREW_CHECK(a.dtype() == b.dtype(), op, ": dtypes ", dtype_name(a.dtype()), " and ", dtype_name(b.dtype()),
             " differ (cast one with astype)");
  check_same_place(op, {{"x", &a}, {"y", &b}});
}

}  // namespace

constinit KernelSlot<CompareFn> compare_kernel("compare", &compare_cpu);
constinit KernelSlot<TestFn> test_kernel("test", &test_cpu);
constinit KernelSlot<IscloseFn> isclose_kernel("isclose", &isclose_cpu);
constinit KernelSlot<WhereFn> where_kernel("where", &where_cpu);
constinit KernelSlot<NonzeroFn> nonzero_kernel("nonzero", &nonzero_cpu);

Tensor compare(CompareOp op, const Tensor& a, const Tensor& b, const char* name) {
  check_same(name, a, b);
  return compare_kernel.get(a.place().type)(op, a, b);
}

Tensor test(TestOp op, const Tensor& x) { return test_kernel.get(x.place().type)(op, x); }

Tensor isclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
  check_same("isclose", a, b);
  CREW_CHECK(is_floating(a.dtype()), "isclose: expected float32 or float64 tensors, got ",
             dtype_name(a.dtype()));
  return isclose_kernel.get(a.place().type)(a, b, rtol, atol, equal_nan);
}

Tensor where(const Tensor& cond, const Tensor& x, const Tensor& y) {
  check_same("where", x, y);
  CREW_CHECK(cond.dtype() == DType::BOOL, "where: condition must be a bool tensor, got ",
             dtype_name(cond.dtype()));
  CREW_CHECK(cond.shape() == x.shape(), "where: condition ", shape_str(cond.shape()), " and x ",
             shape_str(x.shape()), " differ");
  check_same_place("where", {{"condition", &cond}, {"x", &x}});
  return where_kernel.get(x.place().type)(cond, x, y);
}

Tensor nonzero(const Tensor& x) { return nonzero_kernel.get(x.place().type)(x); }

}  // namespace crew::kernels
