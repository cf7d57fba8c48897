#pragma once
// Elementwise activations: float32 on oneDNN eltwise primitives (cached per size),
// float64 on plain loops (used by gradient checks).
#include "crew/tensor/kernels/dispatch.h"
#include "crew/tensor/tensor.h"

namespace crew::kernels {

enum class Activation { RELU, SIGMOID, TANH, GELU_ERF, GELU_TANH };

Tensor activation_forward(Activation kind, const Tensor& x);
// Whether the backward needs only the forward output (RELU, SIGMOID, TANH): then a caller
// need not keep the input alive for it.
bool activation_backward_uses_output_only(Activation kind);
// d loss / d x from grad_y; `x` is the forward input (may be undefined when
// activation_backward_uses_output_only(kind)), `y` its output.
// With in_place the result is written into grad_y's memory (float32 and float64 alike) and
// grad_y itself is returned.
Tensor activation_backward(Activation kind, const Tensor& grad_y, const Tensor& x, const Tensor& y,
                           bool in_place = false);

// The slots the two run (crew/tensor/kernels/dispatch.h), on the operands' place.
using ActivationForwardFn = Tensor(Activation kind, const Tensor& x);
using ActivationBackwardFn = Tensor(Activation kind, const Tensor& grad_y, const Tensor& x, const Tensor& y,
                                    bool in_place);
extern KernelSlot<ActivationForwardFn> activation_forward_kernel;
extern KernelSlot<ActivationBackwardFn> activation_backward_kernel;

}  // namespace crew::kernels
