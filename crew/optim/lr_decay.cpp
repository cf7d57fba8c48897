#include "crew/optim/lr_decay.h"

#include <cmath>

#include "crew/core/check.h"

namespace crew::optim {

ExponentialDecay::ExponentialDecay(double learning_rate, double gamma, int64_t last_epoch)
    : LRScheduler(learning_rate, last_epoch), gamma_(gamma) {
  CREW_CHECK(gamma > 0.0 && gamma < 1.0, "ExponentialDecay: gamma must be in (0, 1), got ", gamma);
  start();
}

double ExponentialDecay::closed_form_lr(int64_t epoch) const {
  return base_lr() * std::pow(gamma_, static_cast<double>(epoch));
}

MultiStepDecay::MultiStepDecay(double learning_rate, std::vector<int64_t> milestones, double gamma,
                               int64_t last_epoch)
    : LRScheduler(learning_rate, last_epoch), milestones_(std::move(milestones)), gamma_(gamma) {
  CREW_CHECK(!milestones_.empty(), "MultiStepDecay: milestones is empty");
  for (size_t i = 1; i < milestones_.size(); ++i) {
    CREW_CHECK(milestones_[i - 1] < milestones_[i], "MultiStepDecay: milestones must increase, got ",
               milestones_[i - 1], " then ", milestones_[i]);
  }
  CREW_CHECK(gamma < 1.0, "MultiStepDecay: gamma should be < 1.0, got ", gamma);
  start();
}

double MultiStepDecay::closed_form_lr(int64_t epoch) const {
  size_t passed = 0;
  while (passed < milestones_.size() && epoch >= milestones_[passed]) ++passed;
  return base_lr() * std::pow(gamma_, static_cast<double>(passed));
}

PiecewiseDecay::PiecewiseDecay(std::vector<int64_t> boundaries, std::vector<double> values,
                               int64_t last_epoch)
    : LRScheduler(values.empty() ? 0.0 : values.front(), last_epoch),
      boundaries_(std::move(boundaries)),
      values_(std::move(values)) {
  CREW_CHECK(values_.size() == boundaries_.size() + 1,
             "PiecewiseDecay: need one more value than boundaries, got ", values_.size(), " values for ",
             boundaries_.size(), " boundaries");
  for (size_t i = 1; i < boundaries_.size(); ++i) {
    CREW_CHECK(boundaries_[i - 1] < boundaries_[i], "PiecewiseDecay: boundaries must increase, got ",
               boundaries_[i - 1], " then ", boundaries_[i]);
  }
  for (double v : values_) CREW_CHECK(std::isfinite(v) && v >= 0.0, "PiecewiseDecay: bad value ", v);
  start();
}

double PiecewiseDecay::closed_form_lr(int64_t epoch) const {
  for (size_t i = 0; i < boundaries_.size(); ++i) {
    if (epoch < boundaries_[i]) return values_[i];
  }
  return values_.back();
}

LinearWarmup::LinearWarmup(std::shared_ptr<LRScheduler> learning_rate, int64_t warmup_steps, double start_lr,
                           double end_lr, int64_t last_epoch)
    : LRScheduler(start_lr, last_epoch),
      after_(std::move(learning_rate)),
      warmup_steps_(warmup_steps),
      start_lr_(start_lr),
      end_lr_(end_lr) {
  CREW_CHECK(after_ != nullptr, "LinearWarmup: the wrapped schedule is null");
  CREW_CHECK(warmup_steps > 0, "LinearWarmup: warmup_steps must be positive, got ", warmup_steps);
  CREW_CHECK(std::isfinite(end_lr) && end_lr >= 0.0, "LinearWarmup: bad end_lr ", end_lr);
  start();
}

LinearWarmup::LinearWarmup(double learning_rate, int64_t warmup_steps, double start_lr, double end_lr,
                           int64_t last_epoch)
    : LRScheduler(start_lr, last_epoch),
      after_lr_(learning_rate),
      warmup_steps_(warmup_steps),
      start_lr_(start_lr),
      end_lr_(end_lr) {
  CREW_CHECK(warmup_steps > 0, "LinearWarmup: warmup_steps must be positive, got ", warmup_steps);
  CREW_CHECK(std::isfinite(end_lr) && end_lr >= 0.0, "LinearWarmup: bad end_lr ", end_lr);
  CREW_CHECK(std::isfinite(learning_rate) && learning_rate >= 0.0, "LinearWarmup: bad learning_rate ",
             learning_rate);
  start();
}

double LinearWarmup::closed_form_lr(int64_t epoch) const {
  if (epoch < warmup_steps_) {
    return (end_lr_ - start_lr_) * static_cast<double>(epoch) / static_cast<double>(warmup_steps_) +
           start_lr_;
  }
  if (!after_) return after_lr_;
  after_->step(epoch - warmup_steps_);  // the wrapped schedule follows, in closed form
  return after_->last_lr();
}

}  // namespace crew::optim
