#pragma once
// More of Paddle's learning-rate schedules (paddle.optimizer.lr): ExponentialDecay,
// MultiStepDecay, PiecewiseDecay and LinearWarmup. Same stepping rules as LRScheduler.
//
//   auto cosine = std::make_shared<CosineAnnealingDecay>(0.1, 90);
//   auto sched = std::make_shared<LinearWarmup>(cosine, /*warmup_steps=*/5, 0.0, 0.1);
#include <cstdint>
#include <memory>
#include <vector>

#include "crew/optim/lr_scheduler.h"

namespace crew::optim {

// base_lr * gamma^epoch.
class ExponentialDecay : public LRScheduler {
 public:
  ExponentialDecay(double learning_rate, double gamma, int64_t last_epoch = -1);

 protected:
  double get_lr() const override { return closed_form_lr(last_epoch()); }
  double closed_form_lr(int64_t epoch) const override;

 private:
  double gamma_;
};

// base_lr * gamma^(number of milestones <= epoch); milestones strictly increasing.
class MultiStepDecay : public LRScheduler {
 public:
  MultiStepDecay(double learning_rate, std::vector<int64_t> milestones, double gamma = 0.1,
                 int64_t last_epoch = -1);

 protected:
  double get_lr() const override { return closed_form_lr(last_epoch()); }
  double closed_form_lr(int64_t epoch) const override;

 private:
  std::vector<int64_t> milestones_;
  double gamma_;
};

// values[i] for boundaries[i-1] <= epoch < boundaries[i]; values has one more entry.
class PiecewiseDecay : public LRScheduler {
 public:
  PiecewiseDecay(std::vector<int64_t> boundaries, std::vector<double> values, int64_t last_epoch = -1);

 protected:
  double get_lr() const override { return closed_form_lr(last_epoch()); }
  double closed_form_lr(int64_t epoch) const override;

 private:
  std::vector<int64_t> boundaries_;
  std::vector<double> values_;
};

// Linear ramp from start_lr to end_lr over warmup_steps, then the wrapped schedule (stepped
// to epoch - warmup_steps) or the constant learning_rate.
class LinearWarmup : public LRScheduler {
 public:
  LinearWarmup(std::shared_ptr<LRScheduler> learning_rate, int64_t warmup_steps, double start_lr,
               double end_lr, int64_t last_epoch = -1);
  LinearWarmup(double learning_rate, int64_t warmup_steps, double start_lr, double end_lr,
               int64_t last_epoch = -1);

 protected:
  double get_lr() const override { return closed_form_lr(last_epoch()); }
  double closed_form_lr(int64_t epoch) const override;

 private:
  std::shared_ptr<LRScheduler> after_;  // null: constant after_lr_
  double after_lr_ = 0.0;
  int64_t warmup_steps_;
  double start_lr_;
  double end_lr_;
};

}  // namespace crew::optim
