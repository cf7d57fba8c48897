#pragma once
// Batch normalisation (training) over the channels of float32 [N, C, ...] (2 to 4 dims) on
// oneDNN's batch_normalization primitives, cached per shape and layout. An x in a blocked
// layout (a conv's output, dnnl_layout.h) is normalised as it is and y keeps that layout, so
// conv -> batch_norm -> relu -> conv moves no activation between layouts.
#include <tuple>

#include "crew/tensor/kernels/dispatch.h"
#include "crew/tensor/tensor.h"

namespace crew::kernels {

// The batch statistics of a forward pass, kept for the backward: mean and biased variance [C].
struct BatchNormStats {
  Tensor mean, variance;
};

// Whether the oneDNN kernels take x: float32, or bfloat16 where oneDNN has bf16 kernels (the
// statistics, weight and bias float32), with 2 to 4 dims and a non-empty batch.
bool batch_norm_supported(const Tensor& x);

// Inference with the running statistics (oneDNN use_global_stats): x float32 or bfloat16 (in
// its layout), mean, variance, weight and bias float32; y in x's dtype and layout. No backward:
// callers that record autograd use the loops. Needs batch_norm_supported(x).
Tensor batch_norm_inference(const Tensor& x, const Tensor& mean, const Tensor& variance, const Tensor& weight,
                            const Tensor& bias, double epsilon);

// y = (x - mean) / sqrt(var + epsilon) * weight + bias with the batch's statistics, which go
// to `stats`; weight, bias [C] or undefined.
Tensor batch_norm_forward(const Tensor& x, const Tensor& weight, const Tensor& bias, double epsilon,
                          BatchNormStats& stats);

struct BatchNormGrads {
  Tensor x, weight, bias;  // weight/bias undefined when the forward had none
};
// Backpropagates through the batch statistics too (training mode).
BatchNormGrads batch_norm_backward(const Tensor& grad_y, const Tensor& x, const Tensor& weight,
                                   const Tensor& bias, double epsilon, const BatchNormStats& stats);

// The slots the two run, on the operands' place: (y, mean, variance) and (dx, dweight, dbias).
using BatchNormForwardFn = std::tuple<Tensor, Tensor, Tensor>(const Tensor& x, const Tensor& weight,
                                                              const Tensor& bias, double epsilon);
using BatchNormBackwardFn = std::tuple<Tensor, Tensor, Tensor>(const Tensor& grad_y, const Tensor& x,
                                                               const Tensor& weight, const Tensor& bias,
                                                               double epsilon, const Tensor& mean,
                                                               const Tensor& variance);
extern KernelSlot<BatchNormForwardFn> batch_norm_forward_kernel;
extern KernelSlot<BatchNormBackwardFn> batch_norm_backward_kernel;

}  // namespace crew::kernels
