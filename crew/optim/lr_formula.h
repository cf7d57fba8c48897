#pragma once
// Paddle's closed-form learning-rate schedules (paddle.optimizer.lr), with t = last_epoch():
//   PolynomialDecay:  (base - end_lr) * (1 - t' / T')^power + end_lr, with t' = min(t, T),
//                     T' = T (cycle = false) or t' = t, T' = T * max(1, ceil(t / T)) (cycle = true)
//   NoamDecay:        base * d_model^-0.5 * min(t^-0.5, warmup_steps^-1.5 * t)   (t^-0.5 := 1 at t = 0)
//   NaturalExpDecay:  base * exp(-gamma * t)
//   InverseTimeDecay: base / (1 + gamma * t)
//   LambdaDecay:      base * lr_lambda(t)
//   MultiplicativeDecay: base * lr_lambda(1) * ... * lr_lambda(t)
// Same stepping rules as LRScheduler.
//
//   auto sched = std::make_shared<NoamDecay>(/*d_model=*/512, /*warmup_steps=*/4000);
#include <cstdint>
#include <functional>

#include "crew/optim/lr_scheduler.h"

namespace crew::optim {

class PolynomialDecay : public LRScheduler {
 public:
  PolynomialDecay(double learning_rate, int64_t decay_steps, double end_lr = 0.0001, double power = 1.0,
                  bool cycle = false, int64_t last_epoch = -1);

 protected:
  double get_lr() const override { return closed_form_lr(last_epoch()); }
  double closed_form_lr(int64_t epoch) const override;

 private:
  int64_t decay_steps_;
  double end_lr_;
  double power_;
  bool cycle_;
};

class NoamDecay : public LRScheduler {
 public:
  NoamDecay(double d_model, int64_t warmup_steps, double learning_rate = 1.0, int64_t last_epoch = -1);

 protected:
  double get_lr() const override { return closed_form_lr(last_epoch()); }
  double closed_form_lr(int64_t epoch) const override;

 private:
  double d_model_;
  int64_t warmup_steps_;
};

class NaturalExpDecay : public LRScheduler {
 public:
  NaturalExpDecay(double learning_rate, double gamma, int64_t last_epoch = -1);

 protected:
  double get_lr() const override { return closed_form_lr(last_epoch()); }
  double closed_form_lr(int64_t epoch) const override;

 private:
  double gamma_;
};

class InverseTimeDecay : public LRScheduler {
 public:
  InverseTimeDecay(double learning_rate, double gamma, int64_t last_epoch = -1);

 protected:
  double get_lr() const override { return closed_form_lr(last_epoch()); }
  double closed_form_lr(int64_t epoch) const override;

 private:
  double gamma_;
};

// lr_lambda: epoch -> factor; called at every step (from the thread that steps).
class LambdaDecay : public LRScheduler {
 public:
  LambdaDecay(double learning_rate, std::function<double(int64_t)> lr_lambda, int64_t last_epoch = -1);

 protected:
  double get_lr() const override { return closed_form_lr(last_epoch()); }
  double closed_form_lr(int64_t epoch) const override;

 private:
  std::function<double(int64_t)> lr_lambda_;
};

// lr_lambda: epoch -> factor of that epoch; the product is recomputed at each step, as Paddle does.
class MultiplicativeDecay : public LRScheduler {
 public:
  MultiplicativeDecay(double learning_rate, std::function<double(int64_t)> lr_lambda,
                      int64_t last_epoch = -1);

 protected:
  double get_lr() const override { return closed_form_lr(last_epoch()); }
  double closed_form_lr(int64_t epoch) const override;

 private:
  std::function<double(int64_t)> lr_lambda_;
};

}  // namespace crew::optim
