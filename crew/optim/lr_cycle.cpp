#include "crew/optim/lr_cycle.h"

#include <cmath>
#include <numbers>

#include "crew/core/check.h"

namespace crew::optim {

OneCycleLR::OneCycleLR(const OneCycleLROptions& o)
    : LRScheduler(o.max_learning_rate / o.divide_factor, o.last_epoch), options_(o) {
  CREW_CHECK(o.total_steps > 0, "OneCycleLR: total_steps must be positive, got ", o.total_steps);
  CREW_CHECK(std::isfinite(o.max_learning_rate) && o.max_learning_rate >= 0.0,
             "OneCycleLR: max_learning_rate must be >= 0, got ", o.max_learning_rate);
  CREW_CHECK(o.divide_factor > 0.0, "OneCycleLR: divide_factor must be positive, got ", o.divide_factor);
  CREW_CHECK(o.end_learning_rate >= 0.0, "OneCycleLR: end_learning_rate must be >= 0, got ",
             o.end_learning_rate);
  CREW_CHECK(o.phase_pct >= 0.0 && o.phase_pct <= 1.0, "OneCycleLR: phase_pct must be in [0, 1], got ",
             o.phase_pct);
  const double initial = o.max_learning_rate / o.divide_factor;
  const double total = static_cast<double>(o.total_steps);
  if (o.three_phase) {
    CREW_CHECK(o.phase_pct < 0.5, "OneCycleLR: with three_phase, phase_pct must be < 0.5, got ", o.phase_pct);
    start_steps_ = {0.0, o.phase_pct * total - 1.0, 2.0 * o.phase_pct * total - 2.0, total - 1.0};
    step_sizes_ = {start_steps_[1] - start_steps_[0], start_steps_[2] - start_steps_[1],
                   start_steps_[3] - start_steps_[2], start_steps_[3] - start_steps_[2]};
    lr_config_ = {initial, o.max_learning_rate, initial, o.end_learning_rate};
  } else {
    start_steps_ = {0.0, o.phase_pct * total - 1.0, total - 1.0};
    step_sizes_ = {start_steps_[1] - start_steps_[0], start_steps_[2] - start_steps_[1],
                   start_steps_[2] - start_steps_[1]};
    lr_config_ = {initial, o.max_learning_rate, o.end_learning_rate};
  }
  start();
}

double OneCycleLR::closed_form_lr(int64_t epoch) const {
  CREW_CHECK(epoch <= options_.total_steps, "OneCycleLR: tried to step ", epoch,
             " times, but the number of total steps is ", options_.total_steps);
  const double t = static_cast<double>(epoch);
  // Paddle's loop: the first phase whose end is at or after t; the last phase catches the rest.
  for (size_t i = 0; i + 1 < lr_config_.size(); ++i) {
    if (t <= start_steps_[i + 1] || i + 2 == lr_config_.size()) {
      const double pct = (t - start_steps_[i]) / step_sizes_[i];
      const double from = lr_config_[i], to = lr_config_[i + 1];
      if (options_.anneal_strategy == AnnealStrategy::LINEAR) return (to - from) * pct + from;
      return to + (from - to) / 2.0 * (std::cos(std::numbers::pi * pct) + 1.0);
    }
  }
  return lr_config_.back();  // not reached: the last phase catches every step
}

CyclicLR::CyclicLR(CyclicLROptions o)
    : LRScheduler(o.base_learning_rate, o.last_epoch), options_(std::move(o)) {
  CREW_CHECK(options_.step_size_up > 0, "CyclicLR: step_size_up must be positive, got ",
             options_.step_size_up);
  CREW_CHECK(options_.step_size_down >= 0, "CyclicLR: step_size_down must be positive, got ",
             options_.step_size_down);
  CREW_CHECK(std::isfinite(options_.max_learning_rate) && options_.max_learning_rate >= 0.0,
             "CyclicLR: max_learning_rate must be >= 0, got ", options_.max_learning_rate);
  CREW_CHECK(options_.exp_gamma > 0.0, "CyclicLR: exp_gamma must be positive, got ", options_.exp_gamma);
  const double up = static_cast<double>(options_.step_size_up);
  const double down = options_.step_size_down > 0 ? static_cast<double>(options_.step_size_down) : up;
  cycle_size_ = up + down;
  step_up_pct_ = up / cycle_size_;
  start();
}

double CyclicLR::scale(double cycle, double iterations) const {
  if (options_.scale_fn) {
    return options_.scale_fn(options_.scale_mode == CyclicScaleMode::CYCLE ? cycle : iterations);
  }
  switch (options_.mode) {
    case CyclicMode::TRIANGULAR:
      return 1.0;
    case CyclicMode::TRIANGULAR2:
      return 1.0 / std::pow(2.0, cycle - 1.0);
    case CyclicMode::EXP_RANGE:
      return std::pow(options_.exp_gamma, iterations);
  }
  return 1.0;
}

double CyclicLR::closed_form_lr(int64_t epoch) const {
  const double iterations = static_cast<double>(epoch);
  const double cycle = 1.0 + std::floor(iterations / cycle_size_);
  const double pct = 1.0 + iterations / cycle_size_ - cycle;
  const double factor = pct <= step_up_pct_ ? pct / step_up_pct_ : (1.0 - pct) / (1.0 - step_up_pct_);
  const double height = (options_.max_learning_rate - base_lr()) * factor;
  return base_lr() + height * scale(cycle, iterations);
}

}  // namespace crew::optim
