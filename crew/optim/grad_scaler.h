#pragma once
// crew::optim::GradScaler: dynamic loss scaling for mixed precision (Paddle's
// paddle.amp.GradScaler). The loss's gradient is multiplied by the scale so that small
// float16 gradients do not flush to zero; step() divides the gradients by it again and skips
// the update when one holds an inf or a NaN; update() adapts the scale (Paddle's rule below).
//
//   GradScaler scaler({.init_loss_scaling = 1024},
//                     [](bool found) { return crew::dist::any_rank(found); });  // all ranks skip together
//   scaler.backward(loss);   // loss.backward() of loss * scale
//   scaler.step(opt);        // unscale, check, opt.step() unless an inf/NaN was found
//   scaler.update();
//   opt.clear_grad();
//
// The rule: a step with an inf/NaN gradient zeroes the good count and counts a bad step;
// decr_every_n_nan_or_inf bad steps in a row multiply the scale by decr_ratio. A good step
// zeroes the bad count; incr_every_n_steps good steps in a row multiply it by incr_ratio.
// state_dict keys: "scale", "incr_ratio", "decr_ratio" (float64), "incr_every_n_steps",
// "decr_every_n_nan_or_inf", "incr_count", "decr_count", "use_dynamic_loss_scaling" (int64).
#include <cstdint>
#include <functional>
#include <map>

#include "crew/optim/optimizer.h"
#include "crew/tensor/state_dict.h"

namespace crew::optim {

struct GradScalerOptions {
  bool enable = true;
  double init_loss_scaling = 32768.0;  // 2^15
  double incr_ratio = 2.0;             // > 1
  double decr_ratio = 0.5;             // in (0, 1)
  int64_t incr_every_n_steps = 1000;
  int64_t decr_every_n_nan_or_inf = 2;
  bool use_dynamic_loss_scaling = true;
};

class GradScaler {
 public:
  // Given this process's found-inf flag, the flag every rank agrees on (crew::dist::any_rank);
  // null: this process alone decides.
  using FoundInfSync = std::function<bool(bool found_inf)>;

  explicit GradScaler(GradScalerOptions options = {}, FoundInfSync sync = nullptr);

  // loss.backward() with the gradient `scale` instead of 1 (plain backward when disabled).
  void backward(const Tensor& loss) const;
  // Divides opt's gradients by the scale in place and checks them for inf/NaN (one kernel
  // pass each, crew::kernels::unscale_and_check_finite_), agreed through the sync.
  // StateError when called twice, or after step(), before update().
  void unscale_(Optimizer& opt);
  // unscale_ unless done, then opt.step() unless an inf/NaN was found. Returns whether the
  // optimizer stepped. StateError when called twice before update().
  bool step(Optimizer& opt);
  // As step(opt), with run_step doing the update instead of opt.step() (a wrapper that applies
  // its own rules around the step, as Python's per-parameter rules do).
  bool step(Optimizer& opt, const std::function<void()>& run_step);
  // The dynamic rule on the last step's outcome (when use_dynamic_loss_scaling).
  void update();
  // step then update.
  bool minimize(Optimizer& opt);

  double scale() const { return scale_; }
  bool found_inf() const { return found_inf_; }
  const GradScalerOptions& options() const { return options_; }
  bool is_enable() const { return options_.enable; }
  // Sets init_loss_scaling and the current scale to it.
  void set_init_loss_scaling(double value);
  void set_incr_ratio(double value);
  void set_decr_ratio(double value);
  void set_incr_every_n_steps(int64_t value);
  void set_decr_every_n_nan_or_inf(int64_t value);

  int64_t incr_count() const { return incr_count_; }
  int64_t decr_count() const { return decr_count_; }

  StateDict state_dict() const;
  // ValueError naming the key when one is missing or bad.
  void set_state_dict(const StateDict& state);

 private:
  enum class OptState { INIT, UNSCALED, STEPPED };
  static void check_options(const GradScalerOptions& o);

  GradScalerOptions options_;
  FoundInfSync sync_;
  double scale_;
  int64_t incr_count_ = 0;
  int64_t decr_count_ = 0;
  bool found_inf_ = false;          // of the last unscale_
  bool last_step_skipped_ = false;  // what update() reads
  std::map<const Optimizer*, OptState> states_;
};

}  // namespace crew::optim
