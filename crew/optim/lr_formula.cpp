#include "crew/optim/lr_formula.h"

#include <algorithm>
#include <cmath>

#include "crew/core/check.h"

namespace crew::optim {

PolynomialDecay::PolynomialDecay(double learning_rate, int64_t decay_steps, double end_lr, double power,
                                 bool cycle, int64_t last_epoch)
    : LRScheduler(learning_rate, last_epoch),
      decay_steps_(decay_steps),
      end_lr_(end_lr),
      power_(power),
      cycle_(cycle) {
  CREW_CHECK(decay_steps > 0, "PolynomialDecay: decay_steps must be positive, got ", decay_steps);
  CREW_CHECK(std::isfinite(end_lr), "PolynomialDecay: end_lr must be finite, got ", end_lr);
  CREW_CHECK(std::isfinite(power), "PolynomialDecay: power must be finite, got ", power);
  start();
}

double PolynomialDecay::closed_form_lr(int64_t epoch) const {
  double t = static_cast<double>(epoch);
  double steps = static_cast<double>(decay_steps_);
  if (cycle_) {
    const double cycles = epoch == 0 ? 1.0 : std::ceil(t / steps);
    steps *= cycles;
  } else {
    t = std::min(t, steps);
  }
  return (base_lr() - end_lr_) * std::pow(1.0 - t / steps, power_) + end_lr_;
}

NoamDecay::NoamDecay(double d_model, int64_t warmup_steps, double learning_rate, int64_t last_epoch)
    : LRScheduler(learning_rate, last_epoch), d_model_(d_model), warmup_steps_(warmup_steps) {
  CREW_CHECK(d_model > 0.0, "NoamDecay: d_model must be positive, got ", d_model);
  CREW_CHECK(warmup_steps > 0, "NoamDecay: warmup_steps must be positive, got ", warmup_steps);
  start();
}

double NoamDecay::closed_form_lr(int64_t epoch) const {
  const double t = static_cast<double>(epoch);
  const double a = epoch == 0 ? 1.0 : std::pow(t, -0.5);
  const double b = std::pow(static_cast<double>(warmup_steps_), -1.5) * t;
  return base_lr() * std::pow(d_model_, -0.5) * std::min(a, b);
}

NaturalExpDecay::NaturalExpDecay(double learning_rate, double gamma, int64_t last_epoch)
    : LRScheduler(learning_rate, last_epoch), gamma_(gamma) {
  CREW_CHECK(std::isfinite(gamma) && gamma >= 0.0, "NaturalExpDecay: gamma must be >= 0, got ", gamma);
  start();
}

double NaturalExpDecay::closed_form_lr(int64_t epoch) const {
  return base_lr() * std::exp(-gamma_ * static_cast<double>(epoch));
}

InverseTimeDecay::InverseTimeDecay(double learning_rate, double gamma, int64_t last_epoch)
    : LRScheduler(learning_rate, last_epoch), gamma_(gamma) {
  CREW_CHECK(std::isfinite(gamma) && gamma >= 0.0, "InverseTimeDecay: gamma must be >= 0, got ", gamma);
  start();
}

double InverseTimeDecay::closed_form_lr(int64_t epoch) const {
  return base_lr() / (1.0 + gamma_ * static_cast<double>(epoch));
}

LambdaDecay::LambdaDecay(double learning_rate, std::function<double(int64_t)> lr_lambda, int64_t last_epoch)
    : LRScheduler(learning_rate, last_epoch), lr_lambda_(std::move(lr_lambda)) {
  CREW_CHECK(static_cast<bool>(lr_lambda_), "LambdaDecay: lr_lambda is empty");
  start();
}

double LambdaDecay::closed_form_lr(int64_t epoch) const { return base_lr() * lr_lambda_(epoch); }

MultiplicativeDecay::MultiplicativeDecay(double learning_rate, std::function<double(int64_t)> lr_lambda,
                                         int64_t last_epoch)
    : LRScheduler(learning_rate, last_epoch), lr_lambda_(std::move(lr_lambda)) {
  CREW_CHECK(static_cast<bool>(lr_lambda_), "MultiplicativeDecay: lr_lambda is empty");
  start();
}

double MultiplicativeDecay::closed_form_lr(int64_t epoch) const {
  double lr = base_lr();
  for (int64_t e = 1; e <= epoch; ++e) lr *= lr_lambda_(e);
  return lr;
}

}  // namespace crew::optim
