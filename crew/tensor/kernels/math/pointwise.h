#pragma once
// Per-element math of crew::kernels::pointwise (abs, sqrt, ..., clip) and its derivative,
// written once for host and device (crew/tensor/kernels/host_device.h).
#include <cmath>
#include <type_traits>

#include "crew/tensor/kernels/host_device.h"

namespace crew::kernels {

enum class MathOp {
  ABS,     // |x|             (also integer dtypes)
  SQUARE,  // x * x           (also integer dtypes)
  SIGN,    // -1, 0 or 1      (also integer dtypes)
  CLIP,    // min(max(x, lo), hi)  (also integer dtypes)
  SQRT,    // x^(1/2)
  RSQRT,   // x^(-1/2)
  SIN,
  COS,
  TANH,
  SIGMOID,  // 1 / (1 + e^-x)
  ERF,
  FLOOR,
  CEIL,
  ROUND,  // half away from zero, as Paddle's
  TAN,
  LOG2,
  LOG10,
  LOG1P,  // log(1 + x), exact near 0
  EXPM1,  // e^x - 1, exact near 0
  TRUNC,  // toward zero
  ASIN,
  ACOS,
  ATAN,
  SINH,
  COSH,
  ASINH,
  ACOSH,
  ATANH,
};

// Whether op is defined on integer dtypes too.
constexpr bool math_op_takes_integers(MathOp op) {
  return op == MathOp::ABS || op == MathOp::SQUARE || op == MathOp::SIGN || op == MathOp::CLIP;
}

struct PointwiseMath {
  // f(x); lo and hi are CLIP's bounds.
  template <typename T>
  CREW_HD static T forward(MathOp op, T x, double lo, double hi) {
    switch (op) {
      case MathOp::ABS:
        return x < T(0) ? T(-x) : x;
      case MathOp::SQUARE:
        return static_cast<T>(x * x);
      case MathOp::SIGN:
        return static_cast<T>((T(0) < x) - (x < T(0)));
      case MathOp::CLIP: {
        const T l = static_cast<T>(lo), h = static_cast<T>(hi);
        return x < l ? l : (x > h ? h : x);
      }
      default:
        break;
    }
    if constexpr (std::is_floating_point_v<T>) {
      switch (op) {
        case MathOp::SQRT:
          return std::sqrt(x);
        case MathOp::RSQRT:
          return T(1) / std::sqrt(x);
        case MathOp::SIN:
          return std::sin(x);
        case MathOp::COS:
          return std::cos(x);
        case MathOp::TANH:
          return std::tanh(x);
        case MathOp::SIGMOID:
          return T(1) / (T(1) + std::exp(-x));
        case MathOp::ERF:
          return std::erf(x);
        case MathOp::FLOOR:
          return std::floor(x);
        case MathOp::CEIL:
          return std::ceil(x);
        case MathOp::ROUND:
          return std::round(x);
        case MathOp::TAN:
          return std::tan(x);
        case MathOp::LOG2:
          return std::log2(x);
        case MathOp::LOG10:
          return std::log10(x);
        case MathOp::LOG1P:
          return std::log1p(x);
        case MathOp::EXPM1:
          return std::expm1(x);
        case MathOp::TRUNC:
          return std::trunc(x);
        case MathOp::ASIN:
          return std::asin(x);
        case MathOp::ACOS:
          return std::acos(x);
        case MathOp::ATAN:
          return std::atan(x);
        case MathOp::SINH:
          return std::sinh(x);
        case MathOp::COSH:
          return std::cosh(x);
        case MathOp::ASINH:
          return std::asinh(x);
        case MathOp::ACOSH:
          return std::acosh(x);
        case MathOp::ATANH:
          return std::atanh(x);
        default:
          break;
      }
    }
    return x;
  }

  // g * f'(x), with y = f(x) (floating dtypes). Where f has a kink (abs at 0, clip at its
  // bounds) the derivative is Paddle's: 0 for abs at 0, 1 inside [lo, hi] bounds included.
  template <typename T>
  CREW_HD static T backward(MathOp op, T x, T y, T g, double lo, double hi) {
    switch (op) {
      case MathOp::ABS:
        return x > T(0) ? g : (x < T(0) ? -g : T(0));
      case MathOp::SQUARE:
        return g * T(2) * x;
      case MathOp::SIGN:
        return T(0);
      case MathOp::CLIP:
        return (x >= static_cast<T>(lo) && x <= static_cast<T>(hi)) ? g : T(0);
      case MathOp::SQRT:
        return g * T(0.5) / y;
      case MathOp::RSQRT:
        return g * T(-0.5) * y * y * y;
      case MathOp::SIN:
        return g * std::cos(x);
      case MathOp::COS:
        return -g * std::sin(x);
      case MathOp::TANH:
        return g * (T(1) - y * y);
      case MathOp::SIGMOID:
        return g * y * (T(1) - y);
      case MathOp::ERF:
        return g * T(1.1283791670955126) * std::exp(-x * x);  // 2 / sqrt(pi)
      case MathOp::FLOOR:
      case MathOp::CEIL:
      case MathOp::ROUND:
      case MathOp::TRUNC:
        return T(0);
      case MathOp::TAN:
        return g * (T(1) + y * y);
      case MathOp::LOG2:
        return g / (x * T(0.6931471805599453));  // ln 2
      case MathOp::LOG10:
        return g / (x * T(2.302585092994046));  // ln 10
      case MathOp::LOG1P:
        return g / (T(1) + x);
      case MathOp::EXPM1:
        return g * (y + T(1));
      case MathOp::ASIN:
        return g / std::sqrt(T(1) - x * x);
      case MathOp::ACOS:
        return -g / std::sqrt(T(1) - x * x);
      case MathOp::ATAN:
        return g / (T(1) + x * x);
      case MathOp::SINH:
        return g * std::cosh(x);
      case MathOp::COSH:
        return g * std::sinh(x);
      case MathOp::ASINH:
        return g / std::sqrt(x * x + T(1));
      case MathOp::ACOSH:
        return g / std::sqrt(x * x - T(1));
      case MathOp::ATANH:
        return g / (T(1) - x * x);
    }
    return T(0);
  }
};

}  // namespace crew::kernels
