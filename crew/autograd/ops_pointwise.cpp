// Pointwise math (abs ... clip), cast, and the bool masks of comparisons and tests.
#include "crew/autograd/autocast.h"
#include "crew/autograd/function.h"
#include "crew/autograd/ops.h"
#include "crew/autograd/ops_math.h"
#include "crew/tensor/kernels/broadcast.h"
#include "crew/tensor/kernels/compare.h"
#include "crew/tensor/kernels/gather.h"
#include "crew/tensor/kernels/pointwise.h"

namespace crew {
namespace {

using kernels::CompareOp;
using kernels::MathOp;
using kernels::TestOp;

Tensor math(MathOp op, const Tensor& x, const char* name, double lo = 0, double hi = 0) {
  if (auto in = amp::autocast_operands(name, x)) return math(op, (*in)[0], name, lo, hi);
  Tensor y = kernels::pointwise(op, x, lo, hi, name);
  if (is_floating(x.dtype()) && autograd::should_record({&x})) {
    autograd::record(y, name, {x},
                     [op, x, y = y.detach(), lo, hi](const Tensor& g, const std::vector<bool>&) {
                       return std::vector<Tensor>{kernels::pointwise_backward(op, x, y, g, lo, hi)};
                     },
                     {x, y});
  }
  return y;
}

// a and b broadcast to one shape and converted to one dtype (the floating one, else a's).
std::pair<Tensor, Tensor> broadcast_pair(const Tensor& a, const Tensor& b, const char* name) {
  const Shape out = kernels::broadcast_shapes(a.shape(), b.shape(), name);
  DType dt = a.dtype();
  if (a.dtype() != b.dtype() && !is_floating(a.dtype()) && is_floating(b.dtype())) dt = b.dtype();
  Tensor x = a.dtype() == dt ? a : a.to(dt);
  Tensor y = b.dtype() == dt ? b : b.to(dt);
  if (x.shape() != out) x = kernels::expand(x, out);
  if (y.shape() != out) y = kernels::expand(y, out);
  return {x, y};
}

Tensor broadcast_compare(CompareOp op, const Tensor& a, const Tensor& b, const char* name) {
  if (auto in = amp::autocast_operands(name, a, b)) return broadcast_compare(op, (*in)[0], (*in)[1], name);
  auto [x, y] = broadcast_pair(a, b, name);
  return kernels::compare(op, x, y, name);
}

}  // namespace

Tensor abs(const Tensor& x) { return math(MathOp::ABS, x, "abs"); }
Tensor sqrt(const Tensor& x) { return math(MathOp::SQRT, x, "sqrt"); }
Tensor rsqrt(const Tensor& x) { return math(MathOp::RSQRT, x, "rsqrt"); }
Tensor square(const Tensor& x) { return math(MathOp::SQUARE, x, "square"); }
Tensor sin(const Tensor& x) { return math(MathOp::SIN, x, "sin"); }
Tensor cos(const Tensor& x) { return math(MathOp::COS, x, "cos"); }
Tensor tanh(const Tensor& x) { return math(MathOp::TANH, x, "tanh"); }
Tensor sigmoid(const Tensor& x) { return math(MathOp::SIGMOID, x, "sigmoid"); }
Tensor erf(const Tensor& x) { return math(MathOp::ERF, x, "erf"); }
Tensor sign(const Tensor& x) { return math(MathOp::SIGN, x, "sign"); }
Tensor floor(const Tensor& x) { return math(MathOp::FLOOR, x, "floor"); }
Tensor ceil(const Tensor& x) { return math(MathOp::CEIL, x, "ceil"); }
Tensor round(const Tensor& x) { return math(MathOp::ROUND, x, "round"); }
Tensor tan(const Tensor& x) { return math(MathOp::TAN, x, "tan"); }
Tensor log2(const Tensor& x) { return math(MathOp::LOG2, x, "log2"); }
Tensor log10(const Tensor& x) { return math(MathOp::LOG10, x, "log10"); }
Tensor log1p(const Tensor& x) { return math(MathOp::LOG1P, x, "log1p"); }
Tensor expm1(const Tensor& x) { return math(MathOp::EXPM1, x, "expm1"); }
Tensor trunc(const Tensor& x) { return math(MathOp::TRUNC, x, "trunc"); }
Tensor asin(const Tensor& x) { return math(MathOp::ASIN, x, "asin"); }
Tensor acos(const Tensor& x) { return math(MathOp::ACOS, x, "acos"); }
Tensor atan(const Tensor& x) { return math(MathOp::ATAN, x, "atan"); }
Tensor sinh(const Tensor& x) { return math(MathOp::SINH, x, "sinh"); }
Tensor cosh(const Tensor& x) { return math(MathOp::COSH, x, "cosh"); }
Tensor asinh(const Tensor& x) { return math(MathOp::ASINH, x, "asinh"); }
Tensor acosh(const Tensor& x) { return math(MathOp::ACOSH, x, "acosh"); }
Tensor atanh(const Tensor& x) { return math(MathOp::ATANH, x, "atanh"); }
Tensor clip(const Tensor& x, double min, double max) {
  CREW_CHECK(min <= max, "clip: min ", min, " is greater than max ", max);
  return math(MathOp::CLIP, x, "clip", min, max);
}

Tensor equal(const Tensor& a, const Tensor& b) { return broadcast_compare(CompareOp::EQ, a, b, "equal"); }
Tensor not_equal(const Tensor& a, const Tensor& b) {
  return broadcast_compare(CompareOp::NE, a, b, "not_equal");
}
Tensor less_than(const Tensor& a, const Tensor& b) {
  return broadcast_compare(CompareOp::LT, a, b, "less_than");
}
Tensor less_equal(const Tensor& a, const Tensor& b) {
  return broadcast_compare(CompareOp::LE, a, b, "less_equal");
}
Tensor greater_than(const Tensor& a, const Tensor& b) {
  return broadcast_compare(CompareOp::GT, a, b, "greater_than");
}
Tensor greater_equal(const Tensor& a, const Tensor& b) {
  return broadcast_compare(CompareOp::GE, a, b, "greater_equal");
}
Tensor logical_and(const Tensor& a, const Tensor& b) {
  return broadcast_compare(CompareOp::AND, a, b, "logical_and");
}
Tensor logical_or(const Tensor& a, const Tensor& b) {
  return broadcast_compare(CompareOp::OR, a, b, "logical_or");
}
Tensor logical_xor(const Tensor& a, const Tensor& b) {
  return broadcast_compare(CompareOp::XOR, a, b, "logical_xor");
}
Tensor logical_not(const Tensor& x) { return kernels::test(TestOp::NOT, x); }
Tensor isnan(const Tensor& x) {
  if (auto in = amp::autocast_operands("isnan", x)) return isnan((*in)[0]);
  return kernels::test(TestOp::ISNAN, x);
}
Tensor isinf(const Tensor& x) {
  if (auto in = amp::autocast_operands("isinf", x)) return isinf((*in)[0]);
  return kernels::test(TestOp::ISINF, x);
}
Tensor isfinite(const Tensor& x) {
  if (auto in = amp::autocast_operands("isfinite", x)) return isfinite((*in)[0]);
  return kernels::test(TestOp::ISFINITE, x);
}

Tensor isclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
  if (auto in = amp::autocast_operands("isclose", a, b))
    return isclose((*in)[0], (*in)[1], rtol, atol, equal_nan);
  auto [x, y] = broadcast_pair(a, b, "isclose");
  return kernels::isclose(x, y, rtol, atol, equal_nan);
}

bool all(const Tensor& x) { return kernels::nonzero(x).numel() == x.numel(); }
bool any(const Tensor& x) { return kernels::nonzero(x).numel() > 0; }

bool allclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
  return all(isclose(a, b, rtol, atol, equal_nan));
}

bool equal_all(const Tensor& a, const Tensor& b) { return a.shape() == b.shape() && all(equal(a, b)); }

}  // namespace crew
