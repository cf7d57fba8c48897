#pragma once
// One SGD and one Momentum step of one element, written once for host and device, in T's
// precision and in this order (bit-exact resume depends on it):
//   SGD:       p -= lr * (g + l2 * p)
//   Momentum:  g' = g + l2 * p;  v = mu * v + g';  p -= lr * v              (plain)
//                                                  p -= lr * (g' + mu * v)  (Nesterov)
#include "crew/tensor/kernels/host_device.h"

namespace crew::kernels {

template <typename T>
struct SgdStep {
  T lr, l2;
  CREW_HD void operator()(T& p, T g) const { p -= lr * (g + l2 * p); }
};

template <typename T, bool Nesterov>
struct MomentumStep {
  T lr, mu, l2;
  CREW_HD void operator()(T& p, T g, T& v) const {
    if constexpr (Nesterov) {
      const T gi = g + l2 * p;
      const T vi = mu * v + gi;
      v = vi;
      p -= lr * (gi + mu * vi);
    } else {
      const T vi = mu * v + (g + l2 * p);
      v = vi;
      p -= lr * vi;
    }
  }
};

}  // namespace crew::kernels
