#include "crew/tensor/kernels/sort_scan.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <type_traits>
#include <vector>

#include "crew/tensor/kernels/broadcast.h"

namespace crew::kernels {
namespace {

template <typename T>
bool is_nan(T v) {
  if constexpr (std::is_floating_point_v<T>) return std::isnan(v);
  return false;
}

Tensor sort_indices_cpu(const Tensor& x, int64_t axis, int64_t k, bool descending) {
  const AxisSplit p = split_at_axis(x.shape(), axis);
  Shape out = x.shape();
  out[axis] = k;
  Tensor y = Tensor::uninitialized(out, DType::INT64);
  int64_t* yp = y.data<int64_t>();
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* xp = x.data<T>();
    std::vector<int64_t> order(static_cast<size_t>(p.extent));
    for (int64_t o = 0; o < p.outer; ++o) {
      for (int64_t i = 0; i < p.inner; ++i) {
        auto at = [&](int64_t e) { return xp[(o * p.extent + e) * p.inner + i]; };
        // NaN is the largest value, as NumPy and Paddle sort it.
        auto less = [&](int64_t a, int64_t b) {
          const T va = at(a), vb = at(b);
          if (is_nan(va)) return false;
          return is_nan(vb) || va < vb;
        };
        std::iota(order.begin(), order.end(), 0);
        if (descending) {
          std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return less(b, a); });
        } else {
          std::stable_sort(order.begin(), order.end(), less);
        }
        for (int64_t e = 0; e < k; ++e) yp[(o * k + e) * p.inner + i] = order[static_cast<size_t>(e)];
      }
    }
  });
  return y;
}

// Calls line(o, i, at) for every line along the split axis; at(e) is its element e's offset.
template <typename Line>
void for_each_line(const AxisSplit& p, Line&& line) {
  for (int64_t o = 0; o < p.outer; ++o) {
    for (int64_t i = 0; i < p.inner; ++i) {
      line(o, i, [&p, o, i](int64_t e) { return (o * p.extent + e) * p.inner + i; });
    }
  }
}

// dp[at(e)] = x[at(0)] * ... * x[at(e - 1)] (1 for e = 0).
template <typename T, typename At>
void store_products_before(const T* xp, T* dp, int64_t extent, const At& at) {
  T before = T(1);
  for (int64_t e = 0; e < extent; ++e) {
    dp[at(e)] = before;
    before *= xp[at(e)];
  }
}

// Running sum (or product) along `axis`, from the end when reverse.
Tensor scan_cpu(const Tensor& x, int64_t axis, bool reverse, bool product) {
  const AxisSplit p = split_at_axis(x.shape(), axis);
  Tensor y = Tensor::uninitialized(x.shape(), x.dtype());
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) {
      const T* xp = x.data<T>();
      T* yp = y.data<T>();
      for_each_line(p, [&](int64_t, int64_t, const auto& at) {
        T acc = product ? T(1) : T(0);
        for (int64_t s = 0; s < p.extent; ++s) {
          const int64_t e = reverse ? p.extent - 1 - s : s;
          acc = static_cast<T>(product ? acc * xp[at(e)] : acc + xp[at(e)]);
          yp[at(e)] = acc;
        }
      });
    }
  });
  return y;
}

Tensor cumsum_cpu(const Tensor& x, int64_t axis, bool reverse) { return scan_cpu(x, axis, reverse, false); }
Tensor cumprod_cpu(const Tensor& x, int64_t axis) { return scan_cpu(x, axis, false, true); }

// dx_j = (prod of x before j) * S_j, with S_j = g_j + x_{j+1} * S_{j+1} summing g_k times the
// product of x over (j, k]: no division, so exact where the line holds zeros.
Tensor cumprod_backward_cpu(const Tensor& x, const Tensor& g, int64_t axis) {
  const AxisSplit p = split_at_axis(x.shape(), axis);
  Tensor dx = Tensor::uninitialized(x.shape(), x.dtype());
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T>) {
      const T *xp = x.data<T>(), *gp = g.data<T>();
      T* dp = dx.data<T>();
      for_each_line(p, [&](int64_t, int64_t, const auto& at) {
        store_products_before(xp, dp, p.extent, at);
        T suffix = T(0);
        for (int64_t e = p.extent - 1; e >= 0; --e) {
          suffix = gp[at(e)] + (e + 1 < p.extent ? xp[at(e + 1)] * suffix : T(0));
          dp[at(e)] *= suffix;
        }
      });
    }
  });
  return dx;
}

Tensor prod_axis_cpu(const Tensor& x, int64_t axis, bool keepdim) {
  const AxisSplit p = split_at_axis(x.shape(), axis);
  Shape out = x.shape();
  if (keepdim) {
    out[axis] = 1;
  } else {
    out.erase(out.begin() + axis);
  }
  Tensor y = Tensor::uninitialized(out, x.dtype());
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) {
      const T* xp = x.data<T>();
      T* yp = y.data<T>();
      for (int64_t o = 0; o < p.outer; ++o) {
        for (int64_t i = 0; i < p.inner; ++i) {
          T acc = T(1);
          for (int64_t e = 0; e < p.extent; ++e)
            acc = static_cast<T>(acc * xp[(o * p.extent + e) * p.inner + i]);
          yp[o * p.inner + i] = acc;
        }
      }
    }
  });
  return y;
}

// Products of the elements before and after each one (prefix and suffix), so that a zero
// in the line gives the others' exact gradient instead of 0/0.
Tensor prod_backward_cpu(const Tensor& x, const Tensor& g, int64_t axis) {
  const AxisSplit p = split_at_axis(x.shape(), axis);
  Tensor dx = Tensor::uninitialized(x.shape(), x.dtype());
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T>) {
      const T *xp = x.data<T>(), *gp = g.data<T>();
      T* dp = dx.data<T>();
      for_each_line(p, [&](int64_t o, int64_t i, const auto& at) {
        store_products_before(xp, dp, p.extent, at);
        T after = T(1);
        const T go = gp[o * p.inner + i];
        for (int64_t e = p.extent - 1; e >= 0; --e) {
          dp[at(e)] *= after * go;
          after *= xp[at(e)];
        }
      });
    }
  });
  return dx;
}

void check_numeric(const Tensor& x, const char* op) {
  CREW_CHECK(x.dtype() != DType::BOOL, op, ": not defined for bool tensors (cast with astype first)");
}

}  // namespace

constinit KernelSlot<SortIndicesFn> sort_indices_kernel("sort_indices", &sort_indices_cpu);
constinit KernelSlot<CumsumFn> cumsum_kernel("cumsum", &cumsum_cpu);
constinit KernelSlot<CumprodFn> cumprod_kernel("cumprod", &cumprod_cpu);
constinit KernelSlot<CumprodBackwardFn> cumprod_backward_kernel("cumprod_backward", &cumprod_backward_cpu);
constinit KernelSlot<ProdAxisFn> prod_axis_kernel("prod_axis", &prod_axis_cpu);
constinit KernelSlot<ProdBackwardFn> prod_backward_kernel("prod_backward", &prod_backward_cpu);

Tensor sort_indices(const Tensor& x, int64_t axis, int64_t k, bool descending) {
  check_numeric(x, "sort");
  CREW_CHECK(k >= 0 && k <= x.shape()[axis], "topk: k = ", k, " is out of range for axis ", axis,
             " of shape ", shape_str(x.shape()));
  return sort_indices_kernel.get(x.place().type)(x, axis, k, descending);
}

Tensor cumsum(const Tensor& x, int64_t axis, bool reverse) {
  check_numeric(x, "cumsum");
  return cumsum_kernel.get(x.place().type)(x, axis, reverse);
}

Tensor cumprod(const Tensor& x, int64_t axis) {
  check_numeric(x, "cumprod");
  return cumprod_kernel.get(x.place().type)(x, axis);
}

Tensor cumprod_backward(const Tensor& x, const Tensor& g, int64_t axis) {
  check_floating(g, "cumprod backward");
  check_same_place("cumprod backward", {{"x", &x}, {"grad", &g}});
  return cumprod_backward_kernel.get(x.place().type)(x, g, axis);
}

Tensor prod_axis(const Tensor& x, int64_t axis, bool keepdim) {
  check_numeric(x, "prod");
  return prod_axis_kernel.get(x.place().type)(x, axis, keepdim);
}

Tensor prod_backward(const Tensor& x, const Tensor& g, int64_t axis) {
  check_floating(g, "prod backward");
  check_same_place("prod backward", {{"x", &x}, {"grad", &g}});
  return prod_backward_kernel.get(x.place().type)(x, g, axis);
}

}  // namespace crew::kernels
