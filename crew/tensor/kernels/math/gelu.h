#pragma once
// erf GELU, y = x * Phi(x), and its derivative, for one element: the float64 CPU loop of
// crew/tensor/kernels/activation.cpp runs it (float32 runs on oneDNN's eltwise), a device
// backend's kernel the same code.
#include <cmath>

#include "crew/tensor/kernels/host_device.h"

namespace crew::kernels::math {

template <typename T>
struct GeluErf {
  static constexpr T kInvSqrt2 = T(0.7071067811865476);
  static constexpr T kInvSqrt2Pi = T(0.3989422804014327);

  // 0.5 x (1 + erf(x / sqrt 2))
  CREW_HD static T forward(T x) { return T(0.5) * x * (1 + std::erf(x * kInvSqrt2)); }
  // d y / d x = Phi(x) + x phi(x)
  CREW_HD static T derivative(T x) {
    return T(0.5) * (1 + std::erf(x * kInvSqrt2)) + x * std::exp(T(-0.5) * x * x) * kInvSqrt2Pi;
  }
};

}  // namespace crew::kernels::math
