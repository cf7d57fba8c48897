#pragma once
// One Adam/AdamW step of one element (Paddle's adam kernel), written once for host and device:
//   g' = g + l2 * p;  m1 = beta1 m1 + (1 - beta1) g';  m2 = beta2 m2 + (1 - beta2) g'^2
//   p = p * decay - lr_t * m1 / (sqrt(m2) + eps_t)
// in T's precision, in this order (checkpoints resume bit-exactly only if it never changes).
//
//   AdamStep<float> step(0.9, 0.999, lr_t, eps_t, 0.0, 1.0);
//   for (i...) step(p[i], g[i], m1[i], m2[i]);
#include <cmath>

#include "crew/tensor/kernels/host_device.h"

namespace crew::kernels {

template <typename T>
struct AdamStep {
  T beta1, beta2, one_minus_beta1, one_minus_beta2, lr_t, eps_t, l2, decay;

  // From the step's coefficients in double (each rounded to T once, 1 - beta in double first).
  CREW_HD AdamStep(double b1, double b2, double lr_t_, double eps_t_, double l2_, double decay_)
      : beta1(static_cast<T>(b1)),
        beta2(static_cast<T>(b2)),
        one_minus_beta1(static_cast<T>(1.0 - b1)),
        one_minus_beta2(static_cast<T>(1.0 - b2)),
        lr_t(static_cast<T>(lr_t_)),
        eps_t(static_cast<T>(eps_t_)),
        l2(static_cast<T>(l2_)),
        decay(static_cast<T>(decay_)) {}

  CREW_HD void operator()(T& p, T g, T& m1, T& m2) const {
    const T pi = p;
    const T gi = g + l2 * pi;
    const T a = beta1 * m1 + one_minus_beta1 * gi;
    const T b = beta2 * m2 + one_minus_beta2 * gi * gi;
    m1 = a;
    m2 = b;
    p = pi * decay - lr_t * a / (std::sqrt(b) + eps_t);
  }
};

}  // namespace crew::kernels
