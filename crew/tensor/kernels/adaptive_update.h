#pragma once
// The per-element updates of RMSProp, Adagrad, Adadelta, Adamax and Lamb, in place on a
// parameter and its accumulators (same shape, dtype float32/float64 and place), like
// optimizer_update.h's SGD/Momentum/Adam. The per-element math is math/adaptive_step.h and
// math/adamax_step.h, shared with device backends; each entry is a KernelSlot a backend fills.
#include "crew/tensor/kernels/dispatch.h"
#include "crew/tensor/tensor.h"

namespace crew::kernels {

struct RmspropCoefficients {
  double lr = 0.0;
  double rho = 0.95;
  double epsilon = 1e-6;
  double momentum = 0.0;
  double l2 = 0.0;
  bool centered = false;
};
// One RMSProp step (math/adaptive_step.h); mean_grad is used (and must be defined) only when
// centered.
void rmsprop_update(const Tensor& param, const Tensor& grad, const Tensor& mean_square,
                    const Tensor& mean_grad, const Tensor& moment, const RmspropCoefficients& c);

struct AdagradCoefficients {
  double lr = 0.0;
  double epsilon = 1e-6;
  double l2 = 0.0;
};
void adagrad_update(const Tensor& param, const Tensor& grad, const Tensor& moment,
                    const AdagradCoefficients& c);

struct AdadeltaCoefficients {
  double rho = 0.95;
  double epsilon = 1e-6;
  double l2 = 0.0;
};
void adadelta_update(const Tensor& param, const Tensor& grad, const Tensor& avg_squared_grad,
                     const Tensor& avg_squared_update, const AdadeltaCoefficients& c);

// lr_t = lr / (1 - beta1^t).
struct AdamaxCoefficients {
  double beta1 = 0.9;
  double beta2 = 0.999;
  double epsilon = 1e-8;
  double lr_t = 0.0;
  double l2 = 0.0;
};
void adamax_update(const Tensor& param, const Tensor& grad, const Tensor& moment, const Tensor& inf_norm,
                   const AdamaxCoefficients& c);

// beta1_pow, beta2_pow: beta^t for this step (beta at the first).
struct LambCoefficients {
  double lr = 0.0;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double epsilon = 1e-6;
  double weight_decay = 0.01;
  double beta1_pow = 0.9;
  double beta2_pow = 0.999;
};
// One Lamb step: the moments and r (math/adamax_step.h), then p -= lr * ratio * r with the
// trust ratio |p| / |r| over the whole parameter (1 when either norm is 0).
void lamb_update(const Tensor& param, const Tensor& grad, const Tensor& m1, const Tensor& m2,
                 const LambCoefficients& c);

using RmspropUpdateFn = void(const Tensor& param, const Tensor& grad, const Tensor& mean_square,
                             const Tensor& mean_grad, const Tensor& moment, const RmspropCoefficients& c);
using AdagradUpdateFn = void(const Tensor& param, const Tensor& grad, const Tensor& moment,
                             const AdagradCoefficients& c);
using AdadeltaUpdateFn = void(const Tensor& param, const Tensor& grad, const Tensor& avg_squared_grad,
                              const Tensor& avg_squared_update, const AdadeltaCoefficients& c);
using AdamaxUpdateFn = void(const Tensor& param, const Tensor& grad, const Tensor& moment,
                            const Tensor& inf_norm, const AdamaxCoefficients& c);
using LambUpdateFn = void(const Tensor& param, const Tensor& grad, const Tensor& m1, const Tensor& m2,
                          const LambCoefficients& c);
extern KernelSlot<RmspropUpdateFn> rmsprop_update_kernel;
extern KernelSlot<AdagradUpdateFn> adagrad_update_kernel;
extern KernelSlot<AdadeltaUpdateFn> adadelta_update_kernel;
extern KernelSlot<AdamaxUpdateFn> adamax_update_kernel;
extern KernelSlot<LambUpdateFn> lamb_update_kernel;

}  // namespace crew::kernels
