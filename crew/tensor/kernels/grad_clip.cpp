#include "crew/tensor/kernels/grad_clip.h"

#include <algorithm>

namespace crew::kernels {
namespace {

template <typename T>
double squared_norm_typed(const T* p, int64_t n) {
  // Eight independent double sums (one dependent add per element is latency-bound; these
  // vectorise), combined in a fixed order, so the result does not depend on the machine.
  constexpr int kLanes = 8;
  double lane[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int l = 0; l < kLanes; ++l) lane[l] += static_cast<double>(p[i + l]) * static_cast<double>(p[i + l]);
  }
  for (; i < n; ++i) lane[0] += static_cast<double>(p[i]) * static_cast<double>(p[i]);
  double s = 0.0;
  for (int l = 0; l < kLanes; ++l) s += lane[l];
  return s;
}

double squared_norm_cpu(const Tensor& g) {
  if (g.dtype() == DType::FLOAT32) return squared_norm_typed(g.data<float>(), g.numel());
  return squared_norm_typed(g.data<double>(), g.numel());
}

void scale_cpu(const Tensor& g, double factor) {
  if (g.dtype() == DType::FLOAT32) {
    float* p = g.data<float>();
    const float f = static_cast<float>(factor);
    for (int64_t i = 0, n = g.numel(); i < n; ++i) p[i] *= f;
  } else {
    double* p = g.data<double>();
    for (int64_t i = 0, n = g.numel(); i < n; ++i) p[i] *= factor;
  }
}

void clamp_cpu(const Tensor& g, double lo, double hi) {
  if (g.dtype() == DType::FLOAT32) {
    float* d = g.data<float>();
    const float l = static_cast<float>(lo), h = static_cast<float>(hi);
    for (int64_t i = 0, n = g.numel(); i < n; ++i) d[i] = std::clamp(d[i], l, h);
  } else {
    double* d = g.data<double>();
    for (int64_t i = 0, n = g.numel(); i < n; ++i) d[i] = std::clamp(d[i], lo, hi);
  }
}

void check_gradient(const Tensor& g) {
  CREW_CHECK(g.defined(), "grad_clip: gradient is undefined");
  CREW_CHECK(g.dtype() == DType::FLOAT32 || g.dtype() == DType::FLOAT64, "grad_clip: gradient dtype ",
             dtype_name(g.dtype()), " is not floating");
}

}  // namespace

constinit KernelSlot<SquaredNormFn> squared_norm_kernel("squared_norm", &squared_norm_cpu);
constinit KernelSlot<ScaleFn> scale_kernel("scale_", &scale_cpu);
constinit KernelSlot<ClampFn> clamp_kernel("clamp_", &clamp_cpu);

double squared_norm(const Tensor& g) {
  check_gradient(g);
  return squared_norm_kernel.get(g.place().type)(g);
}

void scale_(const Tensor& g, double factor) {
  check_gradient(g);
  scale_kernel.get(g.place().type)(g, factor);
}

void clamp_(const Tensor& g, double lo, double hi) {
  check_gradient(g);
  clamp_kernel.get(g.place().type)(g, lo, hi);
}

}  // namespace crew::kernels
