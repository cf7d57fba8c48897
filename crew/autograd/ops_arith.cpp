// Elementwise arithmetic with broadcasting, and unary math.
#include "crew/autograd/autocast.h"
#include "crew/autograd/function.h"
#include "crew/autograd/ops.h"
#include "crew/tensor/kernels/broadcast.h"
#include "crew/tensor/kernels/elementwise.h"

namespace crew {
namespace {

using kernels::BinaryOp;
using kernels::UnaryOp;

Tensor bin(BinaryOp op, const Tensor& a, const Tensor& b) { return kernels::binary(op, a, b, "backward"); }

}  // namespace

Tensor add(const Tensor& a, const Tensor& b) {
  if (auto in = amp::autocast_operands("add", a, b)) return add((*in)[0], (*in)[1]);
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
  if (auto in = amp::autocast_operands("sub", a, b)) return sub((*in)[0], (*in)[1]);
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
  if (auto in = amp::autocast_operands("mul", a, b)) return mul((*in)[0], (*in)[1]);
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
  if (auto in = amp::autocast_operands("div", a, b)) return div((*in)[0], (*in)[1]);
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
  if (auto in = amp::autocast_operands("exp", a)) return exp((*in)[0]);
  Tensor y = kernels::unary(UnaryOp::EXP, a, 0.0, "exp");
  if (autograd::should_record({&a})) {
    autograd::record(y, "exp", {a}, [y = y.detach()](const Tensor& g, const std::vector<bool>&) {
      return std::vector<Tensor>{bin(BinaryOp::MUL, g, y)};
    }, {y});
  }
  return y;
}

Tensor log(const Tensor& a) {
  if (auto in = amp::autocast_operands("log", a)) return log((*in)[0]);
  Tensor y = kernels::unary(UnaryOp::LOG, a, 0.0, "log");
  if (autograd::should_record({&a})) {
    autograd::record(y, "log", {a}, [a](const Tensor& g, const std::vector<bool>&) {
      return std::vector<Tensor>{bin(BinaryOp::DIV, g, a)};
    }, {a});
  }
  return y;
}

Tensor pow(const Tensor& a, double exponent) {
  if (auto in = amp::autocast_operands("pow", a)) return pow((*in)[0], exponent);
  Tensor y = kernels::unary(UnaryOp::POW, a, exponent, "pow");
  if (autograd::should_record({&a})) {
    autograd::record(y, "pow", {a}, [a, exponent](const Tensor& g, const std::vector<bool>&) {
      Tensor d = kernels::unary(UnaryOp::POW_GRAD, a, exponent, "pow backward");
      return std::vector<Tensor>{bin(BinaryOp::MUL, g, d)};
    }, {a});
  }
  return y;
}

}  // namespace crew
