#include "crew/optim/grad_clip.h"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "crew/core/check.h"

namespace crew::optim {
namespace {

// Sum of squares, accumulated in double.
double squared_norm(const Tensor& g) {
  double s = 0.0;
  dispatch_dtype(g.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T>) {
      const T* p = g.data<T>();
      const int64_t n = g.numel();
      // Eight independent double sums (one dependent add per element is latency-bound; these
      // vectorise), combined in a fixed order, so the result does not depend on the machine.
      constexpr int kLanes = 8;
      double lane[kLanes] = {};
      int64_t i = 0;
      for (; i + kLanes <= n; i += kLanes) {
        for (int l = 0; l < kLanes; ++l)
          lane[l] += static_cast<double>(p[i + l]) * static_cast<double>(p[i + l]);
      }
      for (; i < n; ++i) lane[0] += static_cast<double>(p[i]) * static_cast<double>(p[i]);
      for (int l = 0; l < kLanes; ++l) s += lane[l];
    } else {
      CREW_THROW(ValueError, "grad_clip: gradient dtype ", dtype_name(g.dtype()), " is not floating");
    }
  });
  return s;
}

void scale(Tensor g, double factor) {
  if (g.dtype() == DType::FLOAT32) {
    float* p = g.data<float>();
    const float f = static_cast<float>(factor);
    for (int64_t i = 0, n = g.numel(); i < n; ++i) p[i] *= f;
  } else {
    double* p = g.data<double>();
    for (int64_t i = 0, n = g.numel(); i < n; ++i) p[i] *= factor;
  }
}

void check_positive(const char* op, double v) {
  CREW_CHECK(std::isfinite(v) && v > 0.0, op, ": clip_norm must be finite and positive, got ", v);
}

}  // namespace

ClipGradByGlobalNorm::ClipGradByGlobalNorm(double clip_norm) : clip_norm_(clip_norm) {
  check_positive("ClipGradByGlobalNorm", clip_norm);
}

double ClipGradByGlobalNorm::global_norm(const std::vector<Tensor>& params) {
  double s = 0.0;
  for (const Tensor& p : params) {
    Tensor g = p.grad();
    if (g.defined()) s += squared_norm(g);
  }
  return std::sqrt(s);
}

void ClipGradByGlobalNorm::operator()(const std::vector<Tensor>& params) const {
  double norm = global_norm(params);
  if (!(norm > clip_norm_)) return;  // also leaves NaN norms to surface in the loss
  double factor = clip_norm_ / norm;
  for (const Tensor& p : params) {
    Tensor g = p.grad();
    if (g.defined()) scale(g, factor);
  }
}

ClipGradByNorm::ClipGradByNorm(double clip_norm) : clip_norm_(clip_norm) {
  check_positive("ClipGradByNorm", clip_norm);
}

void ClipGradByNorm::operator()(const std::vector<Tensor>& params) const {
  for (const Tensor& p : params) {
    Tensor g = p.grad();
    if (!g.defined()) continue;
    double norm = std::sqrt(squared_norm(g));
    if (norm > clip_norm_) scale(g, clip_norm_ / norm);
  }
}

ClipGradByValue::ClipGradByValue(double max) : ClipGradByValue(max, -max) {}

ClipGradByValue::ClipGradByValue(double max, double min) : max_(max), min_(min) {
  CREW_CHECK(min <= max, "ClipGradByValue: min ", min, " > max ", max);
}

void ClipGradByValue::operator()(const std::vector<Tensor>& params) const {
  for (const Tensor& p : params) {
    Tensor g = p.grad();
    if (!g.defined()) continue;
    if (g.dtype() == DType::FLOAT32) {
      float* d = g.data<float>();
      const float lo = static_cast<float>(min_), hi = static_cast<float>(max_);
      for (int64_t i = 0, n = g.numel(); i < n; ++i) d[i] = std::clamp(d[i], lo, hi);
    } else {
      double* d = g.data<double>();
      for (int64_t i = 0, n = g.numel(); i < n; ++i) d[i] = std::clamp(d[i], min_, max_);
    }
  }
}

}  // namespace crew::optim
