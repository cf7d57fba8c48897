#pragma once
// The optimizers' per-element updates, in place on a parameter and its accumulators (same
// shape, dtype float32/float64 and place). They run every step on every parameter, so the
// CPU entries are written to vectorise; the per-element math is math/adam_step.h and
// math/sgd_step.h, shared with device backends.
#include "crew/tensor/kernels/dispatch.h"
#include "crew/tensor/tensor.h"

namespace crew::kernels {

// p -= lr * (g + l2 * p)
void sgd_update(const Tensor& param, const Tensor& grad, double lr, double l2);

struct MomentumCoefficients {
  double lr = 0.0;
  double momentum = 0.0;
  double l2 = 0.0;
  bool nesterov = false;
};
// g' = g + l2 * p;  v = mu * v + g';  p -= lr * v  (or lr * (g' + mu * v), Nesterov)
void momentum_update(const Tensor& param, const Tensor& grad, const Tensor& velocity,
                     const MomentumCoefficients& c);

// Coefficients of one Adam/AdamW step for one parameter (Paddle's adam kernel):
//   lr_t = lr sqrt(1 - beta2^t) / (1 - beta1^t), eps_t = epsilon sqrt(1 - beta2^t), and
//   decay_scale = 1 - lr * coeff for AdamW's decoupled decay (1 otherwise).
struct AdamCoefficients {
  double beta1 = 0.9;
  double beta2 = 0.999;
  double lr_t = 0.0;
  double eps_t = 0.0;
  double l2 = 0.0;
  double decay_scale = 1.0;
};
// One Adam step (math/adam_step.h) of param with moments m1, m2.
void adam_update(const Tensor& param, const Tensor& grad, const Tensor& m1, const Tensor& m2,
                 const AdamCoefficients& c);

using SgdUpdateFn = void(const Tensor& param, const Tensor& grad, double lr, double l2);
using MomentumUpdateFn = void(const Tensor& param, const Tensor& grad, const Tensor& velocity,
                              const MomentumCoefficients& c);
using AdamUpdateFn = void(const Tensor& param, const Tensor& grad, const Tensor& m1, const Tensor& m2,
                          const AdamCoefficients& c);
extern KernelSlot<SgdUpdateFn> sgd_update_kernel;
extern KernelSlot<MomentumUpdateFn> momentum_update_kernel;
extern KernelSlot<AdamUpdateFn> adam_update_kernel;

}  // namespace crew::kernels
