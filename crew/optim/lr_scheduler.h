#pragma once
// Learning-rate schedules with Paddle's semantics (paddle.optimizer.lr). A schedule starts
// at epoch 0 with last_lr() = its value there; step() advances one epoch (or one iteration:
// the unit is whatever the caller steps on). An optimizer built with a schedule reads
// last_lr() at every step().
//
//   auto sched = std::make_shared<StepDecay>(0.1, /*step_size=*/30, /*gamma=*/0.1);
//   Momentum opt(net->parameters(), sched);
//   for (int epoch = 0; epoch < 90; ++epoch) { train_one_epoch(opt); sched->step(); }
#include <cstdint>

#include "crew/tensor/state_dict.h"

namespace crew::optim {

class LRScheduler {
 public:
  virtual ~LRScheduler() = default;

  // Advances one epoch and recomputes last_lr().
  void step();
  // Jumps to `epoch` (closed form).
  void step(int64_t epoch);
  double last_lr() const { return last_lr_; }
  int64_t last_epoch() const { return last_epoch_; }
  double base_lr() const { return base_lr_; }

  // {"last_epoch": int64 scalar, "last_lr": float64 scalar}, restored exactly by set_state_dict
  // (schedules with more state, such as ReduceOnPlateau, add their entries).
  virtual StateDict state_dict() const;
  virtual void set_state_dict(const StateDict& state);

 protected:
  // last_epoch: the epoch already done (-1: none); derived constructors call start() last.
  LRScheduler(double learning_rate, int64_t last_epoch);
  void start();
  // For schedules stepped by other rules (ReduceOnPlateau): sets the epoch and the rate.
  void set_last(int64_t epoch, double lr) {
    last_epoch_ = epoch;
    last_lr_ = lr;
  }
  // The rate at last_epoch(), given last_lr() still holding the previous epoch's rate.
  virtual double get_lr() const = 0;
  virtual double closed_form_lr(int64_t epoch) const = 0;

 private:
  double base_lr_;
  int64_t last_epoch_;
  double last_lr_;
};

// base_lr * gamma^(epoch / step_size) (integer division).
class StepDecay : public LRScheduler {
 public:
  StepDecay(double learning_rate, int64_t step_size, double gamma = 0.1, int64_t last_epoch = -1);

 protected:
  double get_lr() const override { return closed_form_lr(last_epoch()); }
  double closed_form_lr(int64_t epoch) const override;

 private:
  int64_t step_size_;
  double gamma_;
};

// Cosine annealing (SGDR without restarts), computed recursively as Paddle does:
//   lr_0 = base_lr;  lr_t = (1 + cos(pi t / T)) / (1 + cos(pi (t-1) / T)) * (lr_{t-1} - eta_min) + eta_min
// (with Paddle's special case at (t - 1 - T) % 2T == 0), which equals the closed form
// eta_min + (base_lr - eta_min) * (1 + cos(pi t / T)) / 2 for t <= T.
class CosineAnnealingDecay : public LRScheduler {
 public:
  CosineAnnealingDecay(double learning_rate, int64_t T_max, double eta_min = 0.0, int64_t last_epoch = -1);

 protected:
  double get_lr() const override;
  double closed_form_lr(int64_t epoch) const override;

 private:
  int64_t T_max_;
  double eta_min_;
};

}  // namespace crew::optim
