#pragma once
// ReduceOnPlateau (Paddle's paddle.optimizer.lr.ReduceOnPlateau): multiplies the rate by
// factor when a watched metric (a loss, an accuracy) has not improved for more than
// patience steps, then waits cooldown steps before counting again; never below min_lr, and
// changes under epsilon are skipped. Unlike the other schedules it starts at epoch 0 without
// a step and is stepped with the metric: step(metric).
//
//   auto sched = std::make_shared<ReduceOnPlateau>(ReduceOnPlateauOptions{.learning_rate = 0.1, .patience =
//   2}); for (...) { train(); sched->step(eval_loss); }
#include <cstdint>
#include <optional>

#include "crew/optim/lr_scheduler.h"

namespace crew::optim {

struct ReduceOnPlateauOptions {
  double learning_rate = 0.001;
  bool mode_max = false;  // Paddle's mode: 'min' (false, a loss) or 'max' (true, an accuracy)
  double factor = 0.1;    // < 1
  int64_t patience = 10;
  double threshold = 1e-4;
  bool threshold_abs = false;  // Paddle's threshold_mode: 'rel' (false) or 'abs' (true)
  int64_t cooldown = 0;
  double min_lr = 0.0;
  double epsilon = 1e-8;
};

class ReduceOnPlateau : public LRScheduler {
 public:
  explicit ReduceOnPlateau(const ReduceOnPlateauOptions& options);

  // One epoch done with this metric value; `epoch` sets last_epoch() instead of adding one.
  // (These hide LRScheduler::step(): a plateau schedule needs the metric.)
  void step(double metric);
  void step(double metric, int64_t epoch);

  // LRScheduler's entries and "best" (absent before the first metric), "num_bad_epochs",
  // "cooldown_counter".
  StateDict state_dict() const override;
  void set_state_dict(const StateDict& state) override;

  std::optional<double> best() const { return best_; }
  int64_t num_bad_epochs() const { return num_bad_epochs_; }
  int64_t cooldown_counter() const { return cooldown_counter_; }

 protected:
  double get_lr() const override { return last_lr(); }
  double closed_form_lr(int64_t /*epoch*/) const override { return last_lr(); }

 private:
  bool is_better(double current, double best) const;

  ReduceOnPlateauOptions options_;
  std::optional<double> best_;
  int64_t num_bad_epochs_ = 0;
  int64_t cooldown_counter_ = 0;
};

}  // namespace crew::optim
