#include "crew/optim/lr_scheduler.h"

#include <cmath>
#include <numbers>

#include "crew/core/check.h"

namespace crew::optim {

LRScheduler::LRScheduler(double learning_rate, int64_t last_epoch)
    : base_lr_(learning_rate), last_epoch_(last_epoch), last_lr_(learning_rate) {
  CREW_CHECK(std::isfinite(learning_rate) && learning_rate >= 0.0,
             "LRScheduler: learning_rate must be finite and >= 0, got ", learning_rate);
  CREW_CHECK(last_epoch >= -1, "LRScheduler: last_epoch must be >= -1, got ", last_epoch);
}

void LRScheduler::start() {
  // Paddle's constructor: a schedule resuming at last_epoch = k starts at k + 1 in closed form.
  if (last_epoch_ == -1) {
    step();
  } else {
    step(last_epoch_ + 1);
  }
}

void LRScheduler::step() {
  ++last_epoch_;
  last_lr_ = get_lr();
}

void LRScheduler::step(int64_t epoch) {
  CREW_CHECK(epoch >= 0, "LRScheduler::step: epoch must be >= 0, got ", epoch);
  last_epoch_ = epoch;
  last_lr_ = closed_form_lr(epoch);
}

StateDict LRScheduler::state_dict() const {
  StateDict sd;
  sd.insert("last_epoch", Tensor::scalar(static_cast<double>(last_epoch_), DType::INT64));
  sd.insert("last_lr", Tensor::scalar(last_lr_, DType::FLOAT64));
  return sd;
}

void LRScheduler::set_state_dict(const StateDict& state) {
  const Tensor& epoch = state.at("last_epoch");
  const Tensor& lr = state.at("last_lr");
  CREW_CHECK(epoch.numel() == 1 && lr.numel() == 1,
             "LRScheduler::set_state_dict: last_epoch and last_lr must be scalars, got ",
             shape_str(epoch.shape()), " and ", shape_str(lr.shape()));
  int64_t e = epoch.to_vector<int64_t>()[0];
  CREW_CHECK(e >= 0, "LRScheduler::set_state_dict: last_epoch must be >= 0, got ", e);
  last_epoch_ = e;
  last_lr_ = lr.item();
}

StepDecay::StepDecay(double learning_rate, int64_t step_size, double gamma, int64_t last_epoch)
    : LRScheduler(learning_rate, last_epoch), step_size_(step_size), gamma_(gamma) {
  CREW_CHECK(step_size > 0, "StepDecay: step_size must be positive, got ", step_size);
  CREW_CHECK(gamma < 1.0, "StepDecay: gamma should be < 1.0, got ", gamma);
  start();
}

double StepDecay::closed_form_lr(int64_t epoch) const {
  return base_lr() * std::pow(gamma_, static_cast<double>(epoch / step_size_));
}

CosineAnnealingDecay::CosineAnnealingDecay(double learning_rate, int64_t T_max, double eta_min,
                                           int64_t last_epoch)
    : LRScheduler(learning_rate, last_epoch), T_max_(T_max), eta_min_(eta_min) {
  CREW_CHECK(T_max > 0, "CosineAnnealingDecay: T_max must be positive, got ", T_max);
  CREW_CHECK(std::isfinite(eta_min), "CosineAnnealingDecay: eta_min must be finite, got ", eta_min);
  start();
}

double CosineAnnealingDecay::get_lr() const {
  constexpr double pi = std::numbers::pi;
  const int64_t t = last_epoch();
  const double T = static_cast<double>(T_max_);
  if (t == 0) return base_lr();
  if ((t - 1 - T_max_) % (2 * T_max_) == 0) {
    return last_lr() + (base_lr() - eta_min_) * (1.0 - std::cos(pi / T)) / 2.0;
  }
  return (1.0 + std::cos(pi * static_cast<double>(t) / T)) /
             (1.0 + std::cos(pi * static_cast<double>(t - 1) / T)) * (last_lr() - eta_min_) +
         eta_min_;
}

double CosineAnnealingDecay::closed_form_lr(int64_t epoch) const {
  constexpr double pi = std::numbers::pi;
  return eta_min_ + (base_lr() - eta_min_) *
                        (1.0 + std::cos(pi * static_cast<double>(epoch) / static_cast<double>(T_max_))) / 2.0;
}

}  // namespace crew::optim
