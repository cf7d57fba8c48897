#pragma once
// Layer normalisation over the last axis of x viewed as [rows, cols]: float32 on oneDNN's
// layer_normalization primitives (cached per shape), float64 on plain loops (gradient checks).
#include <cstdint>
#include <tuple>

#include "crew/tensor/kernels/dispatch.h"
#include "crew/tensor/tensor.h"

namespace crew::kernels {

// Per-row statistics of a forward pass, kept for the backward: mean and biased variance [rows].
struct LayerNormStats {
  Tensor mean, variance;
};

// y = (x - mean) / sqrt(var + epsilon) * weight + bias; weight, bias [cols] or undefined.
Tensor layer_norm_forward(const Tensor& x, int64_t rows, int64_t cols, const Tensor& weight,
                          const Tensor& bias, double epsilon, LayerNormStats& stats);

struct LayerNormGrads {
  Tensor x, weight, bias;  // weight/bias undefined when the forward had none
};
// weight, bias: the forward's (or undefined); their gradients are computed when defined.
LayerNormGrads layer_norm_backward(const Tensor& grad_y, const Tensor& x, int64_t rows, int64_t cols,
                                   const Tensor& weight, const Tensor& bias, double epsilon,
                                   const LayerNormStats& stats);

// The slots the two run, on the operands' place: (y, mean, variance) and (dx, dweight, dbias).
using LayerNormForwardFn = std::tuple<Tensor, Tensor, Tensor>(const Tensor& x, int64_t rows, int64_t cols,
                                                              const Tensor& weight, const Tensor& bias,
                                                              double epsilon);
using LayerNormBackwardFn = std::tuple<Tensor, Tensor, Tensor>(const Tensor& grad_y, const Tensor& x,
                                                               int64_t rows, int64_t cols,
                                                               const Tensor& weight, const Tensor& bias,
                                                               double epsilon, const Tensor& mean,
                                                               const Tensor& variance);
extern KernelSlot<LayerNormForwardFn> layer_norm_forward_kernel;
extern KernelSlot<LayerNormBackwardFn> layer_norm_backward_kernel;

}  // namespace crew::kernels
