#include "crew/optim/grad_clip.h"

#include <cmath>

#include "crew/core/check.h"
#include "crew/tensor/kernels/grad_clip.h"

namespace crew::optim {
namespace {

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
    if (g.defined()) s += kernels::squared_norm(g);
  }
  return std::sqrt(s);
}

void ClipGradByGlobalNorm::operator()(const std::vector<Tensor>& params) const {
  double norm = global_norm(params);
  if (!(norm > clip_norm_)) return;  // also leaves NaN norms to surface in the loss
  double factor = clip_norm_ / norm;
  for (const Tensor& p : params) {
    Tensor g = p.grad();
    if (g.defined()) kernels::scale_(g, factor);
  }
}

ClipGradByNorm::ClipGradByNorm(double clip_norm) : clip_norm_(clip_norm) {
  check_positive("ClipGradByNorm", clip_norm);
}

void ClipGradByNorm::operator()(const std::vector<Tensor>& params) const {
  for (const Tensor& p : params) {
    Tensor g = p.grad();
    if (!g.defined()) continue;
    double norm = std::sqrt(kernels::squared_norm(g));
    if (norm > clip_norm_) kernels::scale_(g, clip_norm_ / norm);
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
    kernels::clamp_(g, min_, max_);
  }
}

}  // namespace crew::optim
