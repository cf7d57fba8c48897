#pragma once
// One Adamax step and Lamb's first pass of one element (Paddle 2.4's kernels), written once
// for host and device, in T's precision and in this order (bit-exact resume depends on it).
//   Adamax:  g' = g + l2 p;  m = beta1 m + (1 - beta1) g';  u = max(beta2 u + eps, |g'|)
//            p -= lr_t m / u,  lr_t = lr / (1 - beta1^t)
//   Lamb:    m1 = beta1 m1 + (1 - beta1) g;  m2 = beta2 m2 + (1 - beta2) g^2
//            r = (m1 / (1 - beta1^t)) / (sqrt(m2 / (1 - beta2^t)) + eps) + wd p   (returned)
//            then, over the whole parameter, p -= lr * (|p| / |r|) * r (lamb_update's pass 2)
//
//   LambMomentStep<float> moments(0.9, 0.999, beta1_pow, beta2_pow, 1e-6, 0.01);
//   for (i...) r[i] = moments(p[i], g[i], m1[i], m2[i]);
#include <cmath>

#include "crew/tensor/kernels/host_device.h"

namespace crew::kernels {

template <typename T>
struct AdamaxStep {
  T beta1, one_minus_beta1, beta2, eps, lr_t, l2;

  CREW_HD AdamaxStep(double b1, double b2, double eps_, double lr_t_, double l2_)
      : beta1(static_cast<T>(b1)),
        one_minus_beta1(static_cast<T>(1.0 - b1)),
        beta2(static_cast<T>(b2)),
        eps(static_cast<T>(eps_)),
        lr_t(static_cast<T>(lr_t_)),
        l2(static_cast<T>(l2_)) {}

  CREW_HD void operator()(T& p, T g, T& m, T& u) const {
    const T gi = g + l2 * p;
    const T mi = beta1 * m + one_minus_beta1 * gi;
    const T decayed = beta2 * u + eps;
    const T mag = std::fabs(gi);
    const T ui = decayed > mag ? decayed : mag;
    m = mi;
    u = ui;
    p -= lr_t * mi / ui;
  }
};

template <typename T>
struct LambMomentStep {
  T beta1, one_minus_beta1, beta2, one_minus_beta2, bias1, bias2, eps, wd;

  // bias1 = 1 - beta1^t and bias2 = 1 - beta2^t, from the step's beta powers.
  CREW_HD LambMomentStep(double b1, double b2, double beta1_pow, double beta2_pow, double eps_, double wd_)
      : beta1(static_cast<T>(b1)),
        one_minus_beta1(static_cast<T>(1.0 - b1)),
        beta2(static_cast<T>(b2)),
        one_minus_beta2(static_cast<T>(1.0 - b2)),
        bias1(static_cast<T>(1.0 - beta1_pow)),
        bias2(static_cast<T>(1.0 - beta2_pow)),
        eps(static_cast<T>(eps_)),
        wd(static_cast<T>(wd_)) {}

  // Updates the moments; returns r, the update direction before the trust ratio.
  CREW_HD T operator()(T p, T g, T& m1, T& m2) const {
    const T a = beta1 * m1 + one_minus_beta1 * g;
    const T b = beta2 * m2 + one_minus_beta2 * g * g;
    m1 = a;
    m2 = b;
    return (a / bias1) / (std::sqrt(b / bias2) + eps) + wd * p;
  }
};

}  // namespace crew::kernels
