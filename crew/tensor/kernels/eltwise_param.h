#pragma once
// Parametrised elementwise activations (Paddle's elu, selu, swish, mish, hardsigmoid, hardtanh,
// softsign, tanhshrink). float32 runs on oneDNN eltwise where oneDNN 2.6 has the algorithm
// (elu, swish, mish, clip_v2 for hardtanh), primitives cached per (op, size, parameters); the
// rest, and float64 (gradient checks), run as plain loops on the kernel threads.
#include "crew/tensor/kernels/dispatch.h"
#include "crew/tensor/tensor.h"

namespace crew::kernels {

enum class EltwiseOp {
  ELU,          // x > 0 ? x : alpha (e^x - 1)
  SELU,         // beta (x > 0 ? x : alpha (e^x - 1)); beta is Paddle's scale
  SWISH,        // x sigmoid(alpha x) (Paddle 2.4: alpha = 1)
  MISH,         // x tanh(softplus(x))
  HARDSIGMOID,  // clip(alpha x + beta, 0, 1) (alpha = slope, beta = offset)
  HARDTANH,     // clip(x, alpha, beta); gradient 1 strictly inside (alpha, beta)
  SOFTSIGN,     // x / (1 + |x|)
  TANHSHRINK,   // x - tanh(x)
};

struct EltwiseParams {
  EltwiseOp op = EltwiseOp::ELU;
  double alpha = 0;
  double beta = 0;
};

// y = op(x), x float32 or float64 of any shape; y row-major.
Tensor eltwise_forward(const EltwiseParams& p, const Tensor& x);
// d loss / d x for grad_y at forward input x (every op here backpropagates from its input).
Tensor eltwise_backward(const EltwiseParams& p, const Tensor& grad_y, const Tensor& x);

using EltwiseForwardFn = Tensor(const EltwiseParams& p, const Tensor& x);
using EltwiseBackwardFn = Tensor(const EltwiseParams& p, const Tensor& grad_y, const Tensor& x);
extern KernelSlot<EltwiseForwardFn> eltwise_forward_kernel;
extern KernelSlot<EltwiseBackwardFn> eltwise_backward_kernel;

}  // namespace crew::kernels
