#pragma once
// One RMSProp, Adagrad and Adadelta step of one element (Paddle 2.4's kernels), written once
// for host and device, in T's precision and in this order (bit-exact resume depends on it).
// g' = g + l2 * p in each (weight_decay as L2 regularisation; 0 by default).
//   RMSProp:   ms = rho ms + (1 - rho) g'^2
//              centered: mg = rho mg + (1 - rho) g';  d = ms - mg^2 + eps   (else d = ms + eps)
//              mom = mu mom + lr g' / sqrt(d);  p -= mom
//   Adagrad:   m += g'^2;  p -= lr g' / (sqrt(m) + eps)
//   Adadelta:  asg = rho asg + (1 - rho) g'^2;  u = -sqrt((asu + eps) / (asg + eps)) g'
//              asu = rho asu + (1 - rho) u^2;  p += u          (no learning rate: Paddle 2.4)
//
//   RmspropStep<float> step(lr, 0.95, 1e-6, 0.0, 0.0);
//   for (i...) step(p[i], g[i], ms[i], mom[i]);         // step(p, g, ms, mg, mom) if centered
#include <cmath>

#include "crew/tensor/kernels/host_device.h"

namespace crew::kernels {

template <typename T>
struct RmspropStep {
  T lr, rho, one_minus_rho, eps, mu, l2;

  CREW_HD RmspropStep(double lr_, double rho_, double eps_, double mu_, double l2_)
      : lr(static_cast<T>(lr_)),
        rho(static_cast<T>(rho_)),
        one_minus_rho(static_cast<T>(1.0 - rho_)),
        eps(static_cast<T>(eps_)),
        mu(static_cast<T>(mu_)),
        l2(static_cast<T>(l2_)) {}

  // Plain RMSProp: mean square ms and momentum mom.
  CREW_HD void operator()(T& p, T g, T& ms, T& mom) const {
    const T gi = g + l2 * p;
    const T msi = rho * ms + one_minus_rho * gi * gi;
    ms = msi;
    finish(p, gi, msi + eps, mom);
  }
  // Centered RMSProp: also the mean gradient mg.
  CREW_HD void operator()(T& p, T g, T& ms, T& mg, T& mom) const {
    const T gi = g + l2 * p;
    const T msi = rho * ms + one_minus_rho * gi * gi;
    const T mgi = rho * mg + one_minus_rho * gi;
    ms = msi;
    mg = mgi;
    finish(p, gi, msi - mgi * mgi + eps, mom);
  }

 private:
  CREW_HD void finish(T& p, T gi, T denom, T& mom) const {
    const T v = mu * mom + lr * gi / std::sqrt(denom);
    mom = v;
    p -= v;
  }
};

template <typename T>
struct AdagradStep {
  T lr, eps, l2;
  CREW_HD void operator()(T& p, T g, T& m) const {
    const T gi = g + l2 * p;
    const T mi = m + gi * gi;
    m = mi;
    p -= lr * gi / (std::sqrt(mi) + eps);
  }
};

template <typename T>
struct AdadeltaStep {
  T rho, one_minus_rho, eps, l2;

  CREW_HD AdadeltaStep(double rho_, double eps_, double l2_)
      : rho(static_cast<T>(rho_)),
        one_minus_rho(static_cast<T>(1.0 - rho_)),
        eps(static_cast<T>(eps_)),
        l2(static_cast<T>(l2_)) {}

  CREW_HD void operator()(T& p, T g, T& asg, T& asu) const {
    const T gi = g + l2 * p;
    const T a = rho * asg + one_minus_rho * gi * gi;
    const T u = -std::sqrt((asu + eps) / (a + eps)) * gi;
    asg = a;
    asu = rho * asu + one_minus_rho * u * u;
    p += u;
  }
};

}  // namespace crew::kernels
