#pragma once
// The plain loops of batch_norm over the channels of [N, C, ...] (float32 / float64): what
// runs where oneDNN's batch_norm.h does not (inference, SyncBatchNorm's global statistics,
// float64). Per-channel statistics are float64 [C] tensors on x's place; the caller combines
// them over ranks and divides by the element count between the passes.
#include <utility>

#include "crew/tensor/kernels/dispatch.h"
#include "crew/tensor/tensor.h"

namespace crew::kernels {

// Per channel: sum of x. float64 [C].
Tensor batch_norm_channel_sums(const Tensor& x);
// Per channel: sum of (x - mean)^2 for mean float64 [C]. float64 [C].
Tensor batch_norm_channel_sq_dev(const Tensor& x, const Tensor& mean);
// y = (x - mean) * invstd * scale + bias per channel; mean, invstd, scale float64 [C], bias
// x's dtype [C] or undefined.
Tensor batch_norm_normalize(const Tensor& x, const Tensor& mean, const Tensor& invstd, const Tensor& scale,
                            const Tensor& bias);
// Per channel: (sum g, sum g * xhat), xhat = (x - mean) * invstd. float64 [C] each.
std::pair<Tensor, Tensor> batch_norm_grad_sums(const Tensor& grad_y, const Tensor& x, const Tensor& mean,
                                               const Tensor& invstd);
// d loss / d x = (g - (sum_g + xhat * sum_gx) / count) * scale * invstd in training (through
// the batch statistics), g * scale * invstd in inference.
Tensor batch_norm_input_grad(const Tensor& grad_y, const Tensor& x, const Tensor& mean, const Tensor& invstd,
                             const Tensor& scale, const Tensor& sum_g, const Tensor& sum_gx, double count,
                             bool training);
// In place: running = momentum * running + (1 - momentum) * batch, for mean and variance
// (running_* of x's dtype, batch_* float64 [C]).
void batch_norm_update_running(const Tensor& running_mean, const Tensor& running_var,
                               const Tensor& batch_mean, const Tensor& batch_var, double momentum);

using BatchNormChannelSumsFn = Tensor(const Tensor& x);
using BatchNormChannelSqDevFn = Tensor(const Tensor& x, const Tensor& mean);
using BatchNormNormalizeFn = Tensor(const Tensor& x, const Tensor& mean, const Tensor& invstd,
                                    const Tensor& scale, const Tensor& bias);
using BatchNormGradSumsFn = std::pair<Tensor, Tensor>(const Tensor& grad_y, const Tensor& x,
                                                      const Tensor& mean, const Tensor& invstd);
using BatchNormInputGradFn = Tensor(const Tensor& grad_y, const Tensor& x, const Tensor& mean,
                                    const Tensor& invstd, const Tensor& scale, const Tensor& sum_g,
                                    const Tensor& sum_gx, double count, bool training);
using BatchNormUpdateRunningFn = void(const Tensor& running_mean, const Tensor& running_var,
                                      const Tensor& batch_mean, const Tensor& batch_var, double momentum);
extern KernelSlot<BatchNormChannelSumsFn> batch_norm_channel_sums_kernel;
extern KernelSlot<BatchNormChannelSqDevFn> batch_norm_channel_sq_dev_kernel;
extern KernelSlot<BatchNormNormalizeFn> batch_norm_normalize_kernel;
extern KernelSlot<BatchNormGradSumsFn> batch_norm_grad_sums_kernel;
extern KernelSlot<BatchNormInputGradFn> batch_norm_input_grad_kernel;
extern KernelSlot<BatchNormUpdateRunningFn> batch_norm_update_running_kernel;

}  // namespace crew::kernels
