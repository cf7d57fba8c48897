#include "crew/optim/lr_plateau.h"

#include <algorithm>
#include <cmath>

#include "crew/core/check.h"

namespace crew::optim {

ReduceOnPlateau::ReduceOnPlateau(const ReduceOnPlateauOptions& o)
    : LRScheduler(o.learning_rate, 0), options_(o) {
  CREW_CHECK(o.factor < 1.0, "ReduceOnPlateau: new_lr = origin_lr * factor and factor should be < 1.0, got ",
             o.factor);
  CREW_CHECK(o.factor >= 0.0, "ReduceOnPlateau: factor must be >= 0, got ", o.factor);
  CREW_CHECK(o.patience >= 0, "ReduceOnPlateau: patience must be >= 0, got ", o.patience);
  CREW_CHECK(o.cooldown >= 0, "ReduceOnPlateau: cooldown must be >= 0, got ", o.cooldown);
  CREW_CHECK(std::isfinite(o.threshold), "ReduceOnPlateau: threshold must be finite, got ", o.threshold);
  CREW_CHECK(o.min_lr >= 0.0, "ReduceOnPlateau: min_lr must be >= 0, got ", o.min_lr);
}

bool ReduceOnPlateau::is_better(double current, double best) const {
  const double margin = options_.threshold_abs ? options_.threshold : best * options_.threshold;
  return options_.mode_max ? current > best + margin : current < best - margin;
}

void ReduceOnPlateau::step(double metric) { step(metric, last_epoch() + 1); }

void ReduceOnPlateau::step(double metric, int64_t epoch) {
  CREW_CHECK(epoch >= 0, "ReduceOnPlateau::step: epoch must be >= 0, got ", epoch);
  double lr = last_lr();
  if (cooldown_counter_ > 0) {
    --cooldown_counter_;
  } else {
    if (!best_ || is_better(metric, *best_)) {
      best_ = metric;
      num_bad_epochs_ = 0;
    } else {
      ++num_bad_epochs_;
    }
    if (num_bad_epochs_ > options_.patience) {
      cooldown_counter_ = options_.cooldown;
      num_bad_epochs_ = 0;
      const double reduced = std::max(lr * options_.factor, options_.min_lr);
      if (lr - reduced > options_.epsilon) lr = reduced;
    }
  }
  set_last(epoch, lr);
}

StateDict ReduceOnPlateau::state_dict() const {
  StateDict sd = LRScheduler::state_dict();
  if (best_) sd.insert("best", Tensor::scalar(*best_, DType::FLOAT64));
  sd.insert("num_bad_epochs", Tensor::scalar(static_cast<double>(num_bad_epochs_), DType::INT64));
  sd.insert("cooldown_counter", Tensor::scalar(static_cast<double>(cooldown_counter_), DType::INT64));
  return sd;
}

void ReduceOnPlateau::set_state_dict(const StateDict& state) {
  auto counter = [&](const char* key) {
    const Tensor& t = state.at(key);
    CREW_CHECK(t.numel() == 1, "ReduceOnPlateau::set_state_dict: ", key, " must be a scalar, got ",
               shape_str(t.shape()));
    const int64_t v = t.to_vector<int64_t>()[0];
    CREW_CHECK(v >= 0, "ReduceOnPlateau::set_state_dict: ", key, " must be >= 0, got ", v);
    return v;
  };
  const int64_t bad = counter("num_bad_epochs");
  const int64_t cooldown = counter("cooldown_counter");
  LRScheduler::set_state_dict(state);
  num_bad_epochs_ = bad;
  cooldown_counter_ = cooldown;
  best_.reset();
  if (state.contains("best")) best_ = state.at("best").item();
}

}  // namespace crew::optim
