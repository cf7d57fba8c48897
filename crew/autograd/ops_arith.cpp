// Elementwise arithmetic with broadcasting, and unary math.
#include <cmath>

#include "crew/autograd/function.h"
#include "crew/autograd/ops.h"
#include "crew/tensor/kernels/broadcast.h"

namespace crew {
namespace {

using kernels::BinaryOp;

Tensor bin(BinaryOp op, const Tensor& a, const Tensor& b) { return kernels::binary(op, a, b, "backward"); }

template <typename F>
Tensor map_unary(const Tensor& x, const char* name, F f) {
  kernels::check_floating(x, name);
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

}  // namespace

Tensor add(const Tensor& a, const Tensor& b) {
  Tensor y = kernels::binary(BinaryOp::ADD, a, b, "add");
  if (autograd::should_record({&a, &b})) {
    autograd::record(y, "add", {a, b},
                     [sa = a.shape(), sb = b.shape()](const Tensor& g, const std::vector<bool>& n) {
                       return std::vector<Tensor>{n[0] ? kernels::sum_to(g, sa) : Tensor(),
                                                  n[1] ? kernels::sum_to(g, sb) : Tensor()};
                     });
  }
  return y;
}

Tensor sub(const Tensor& a, const Tensor& b) {
  Tensor y = kernels::binary(BinaryOp::SUB, a, b, "sub");
  if (autograd::should_record({&a, &b})) {
    autograd::record(
        y, "sub", {a, b}, [sa = a.shape(), sb = b.shape()](const Tensor& g, const std::vector<bool>& n) {
          return std::vector<Tensor>{n[0] ? kernels::sum_to(g, sa) : Tensor(),
                                     n[1] ? kernels::sum_to(kernels::affine(g, -1, 0), sb) : Tensor()};
        });
  }
  return y;
}

Tensor mul(const Tensor& a, const Tensor& b) {
  Tensor y = kernels::binary(BinaryOp::MUL, a, b, "mul");
  if (autograd::should_record({&a, &b})) {
    autograd::record(y, "mul", {a, b}, [a, b](const Tensor& g, const std::vector<bool>& n) {
      return std::vector<Tensor>{n[0] ? kernels::sum_to(bin(BinaryOp::MUL, g, b), a.shape()) : Tensor(),
                                 n[1] ? kernels::sum_to(bin(BinaryOp::MUL, g, a), b.shape()) : Tensor()};
    }, {a, b});
  }
  return y;
}

Tensor div(const Tensor& a, const Tensor& b) {
  Tensor y = kernels::binary(BinaryOp::DIV, a, b, "div");
  if (autograd::should_record({&a, &b})) {
    // d/da = g / b; d/db = -g * y / b.
    autograd::record(
        y, "div", {a, b}, [sa = a.shape(), b, y = y.detach()](const Tensor& g, const std::vector<bool>& n) {
          Tensor g_over_b = bin(BinaryOp::DIV, g, b);
          Tensor gb;
          if (n[1]) gb = kernels::sum_to(kernels::affine(bin(BinaryOp::MUL, g_over_b, y), -1, 0), b.shape());
          return std::vector<Tensor>{n[0] ? kernels::sum_to(g_over_b, sa) : Tensor(), gb};
        },
        {b, y});
  }
  return y;
}

Tensor add(const Tensor& a, double b) {
  Tensor y = kernels::affine(a, 1, b);
  if (autograd::should_record({&a})) {
    autograd::record(y, "add_scalar", {a},
                     [](const Tensor& g, const std::vector<bool>&) { return std::vector<Tensor>{g}; });
  }
  return y;
}

Tensor mul(const Tensor& a, double b) {
  Tensor y = kernels::affine(a, b, 0);
  if (autograd::should_record({&a})) {
    autograd::record(y, "mul_scalar", {a}, [b](const Tensor& g, const std::vector<bool>&) {
      return std::vector<Tensor>{kernels::affine(g, b, 0)};
    });
  }
  return y;
}

Tensor neg(const Tensor& a) {
  Tensor y = kernels::affine(a, -1, 0);
  if (autograd::should_record({&a})) {
    autograd::record(y, "neg", {a}, [](const Tensor& g, const std::vector<bool>&) {
      return std::vector<Tensor>{kernels::affine(g, -1, 0)};
    });
  }
  return y;
}

Tensor exp(const Tensor& a) {
  Tensor y = map_unary(a, "exp", [](auto v) { return std::exp(v); });
  if (autograd::should_record({&a})) {
    autograd::record(y, "exp", {a}, [y = y.detach()](const Tensor& g, const std::vector<bool>&) {
      return std::vector<Tensor>{bin(BinaryOp::MUL, g, y)};
    }, {y});
  }
  return y;
}

Tensor log(const Tensor& a) {
  Tensor y = map_unary(a, "log", [](auto v) { return std::log(v); });
  if (autograd::should_record({&a})) {
    autograd::record(y, "log", {a}, [a](const Tensor& g, const std::vector<bool>&) {
      return std::vector<Tensor>{bin(BinaryOp::DIV, g, a)};
    }, {a});
  }
  return y;
}

Tensor pow(const Tensor& a, double exponent) {
  Tensor y = map_unary(a, "pow", [exponent](auto v) { return std::pow(v, exponent); });
  if (autograd::should_record({&a})) {
    autograd::record(y, "pow", {a}, [a, exponent](const Tensor& g, const std::vector<bool>&) {
      Tensor d =
          map_unary(a, "pow backward", [exponent](auto v) { return exponent * std::pow(v, exponent - 1); });
      return std::vector<Tensor>{bin(BinaryOp::MUL, g, d)};
    }, {a});
  }
  return y;
}

}  // namespace crew
