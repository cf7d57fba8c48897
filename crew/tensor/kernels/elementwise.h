#pragma once
// Element-wise unary math (float32 / float64): y = f(x), a new tensor on x's place.
#include "crew/tensor/kernels/dispatch.h"
#include "crew/tensor/tensor.h"

namespace crew::kernels {

enum class UnaryOp {
  EXP,       // e^x
  LOG,       // ln x
  POW,       // x^exponent
  POW_GRAD,  // exponent * x^(exponent - 1), the derivative of POW
};

// f(x) element-wise; ValueError naming `name` unless x is float32 or float64. `exponent`
// is used by POW and POW_GRAD only. Runs the entry of x's place.
Tensor unary(UnaryOp op, const Tensor& x, double exponent, const char* name);

using UnaryFn = Tensor(UnaryOp op, const Tensor& x, double exponent);
extern KernelSlot<UnaryFn> unary_kernel;

}  // namespace crew::kernels
