#pragma once
// Paddle's cyclic learning-rate schedules (paddle.optimizer.lr), stepped once per batch.
//
// OneCycleLR: from max_learning_rate / divide_factor up to max_learning_rate over the first
// phase_pct of total_steps, then down to end_learning_rate (three_phase: back to the initial
// rate over as many steps, then down to end_learning_rate), annealed by cosine or linearly.
// Stepping past total_steps is a ValueError, as in Paddle.
//
// CyclicLR: a triangle between base_learning_rate and max_learning_rate, step_size_up steps
// up and step_size_down down (default: the same), its height scaled per cycle or per
// iteration by scale_fn: 1 (triangular), 1 / 2^(cycle - 1) (triangular2), exp_gamma^iteration
// (exp_range), or a function of the caller's.
//
//   auto sched = std::make_shared<OneCycleLR>(OneCycleLROptions{.max_learning_rate = 0.1, .total_steps =
//   1000});
#include <cstdint>
#include <functional>
#include <vector>

#include "crew/optim/lr_scheduler.h"

namespace crew::optim {

enum class AnnealStrategy { COS, LINEAR };

struct OneCycleLROptions {
  double max_learning_rate = 0.1;
  int64_t total_steps = 0;  // required: > 0
  double divide_factor = 25.0;
  double end_learning_rate = 0.0001;
  double phase_pct = 0.3;
  AnnealStrategy anneal_strategy = AnnealStrategy::COS;
  bool three_phase = false;
  int64_t last_epoch = -1;
};

class OneCycleLR : public LRScheduler {
 public:
  explicit OneCycleLR(const OneCycleLROptions& options);

 protected:
  double get_lr() const override { return closed_form_lr(last_epoch()); }
  double closed_form_lr(int64_t epoch) const override;

 private:
  OneCycleLROptions options_;
  std::vector<double> start_steps_;  // phase boundaries (Paddle's _start_steps)
  std::vector<double> step_sizes_;   // steps per phase
  std::vector<double> lr_config_;    // the rate at each boundary
};

enum class CyclicMode { TRIANGULAR, TRIANGULAR2, EXP_RANGE };
enum class CyclicScaleMode { CYCLE, ITERATIONS };

struct CyclicLROptions {
  double base_learning_rate = 0.0;
  double max_learning_rate = 0.0;
  int64_t step_size_up = 0;    // required: > 0
  int64_t step_size_down = 0;  // 0: step_size_up
  CyclicMode mode = CyclicMode::TRIANGULAR;
  double exp_gamma = 1.0;
  // When set, replaces mode's scale function; it gets the cycle (1, 2, ...) or the iteration.
  std::function<double(double)> scale_fn;
  CyclicScaleMode scale_mode = CyclicScaleMode::CYCLE;  // used with scale_fn only
  int64_t last_epoch = -1;
};

class CyclicLR : public LRScheduler {
 public:
  explicit CyclicLR(CyclicLROptions options);

 protected:
  double get_lr() const override { return closed_form_lr(last_epoch()); }
  double closed_form_lr(int64_t epoch) const override;

 private:
  double scale(double cycle, double iterations) const;

  CyclicLROptions options_;
  double cycle_size_;
  double step_up_pct_;
};

}  // namespace crew::optim
