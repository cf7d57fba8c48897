#include "crew/optim/grad_scaler.h"

#include <cmath>
#include <string>

#include "crew/core/check.h"
#include "crew/tensor/kernels/amp.h"

namespace crew::optim {
namespace {

double scalar_entry(const StateDict& state, const std::string& key) {
  CREW_CHECK(state.contains(key), "GradScaler.set_state_dict: missing key '", key, "'");
  const Tensor& t = state.at(key);
  CREW_CHECK(t.numel() == 1, "GradScaler.set_state_dict: '", key, "' must hold one value, got shape ",
             shape_str(t.shape()));
  return t.to_vector<double>()[0];
}

}  // namespace

GradScaler::GradScaler(GradScalerOptions options, FoundInfSync sync)
    : options_(options), sync_(std::move(sync)), scale_(options.init_loss_scaling) {
  check_options(options_);
}

void GradScaler::check_options(const GradScalerOptions& o) {
  CREW_CHECK(std::isfinite(o.init_loss_scaling) && o.init_loss_scaling > 0,
             "GradScaler: init_loss_scaling must be finite and > 0, got ", o.init_loss_scaling);
  CREW_CHECK(o.incr_ratio > 1.0, "GradScaler: incr_ratio must be > 1, got ", o.incr_ratio);
  CREW_CHECK(o.decr_ratio > 0.0 && o.decr_ratio < 1.0, "GradScaler: decr_ratio must be in (0, 1), got ",
             o.decr_ratio);
  CREW_CHECK(o.incr_every_n_steps >= 1, "GradScaler: incr_every_n_steps must be >= 1, got ",
             o.incr_every_n_steps);
  CREW_CHECK(o.decr_every_n_nan_or_inf >= 1, "GradScaler: decr_every_n_nan_or_inf must be >= 1, got ",
             o.decr_every_n_nan_or_inf);
}

void GradScaler::backward(const Tensor& loss) const {
  if (!options_.enable) {
    loss.backward();
    return;
  }
  loss.backward(Tensor::full(loss.shape(), scale_, loss.dtype(), loss.place()));
}

void GradScaler::unscale_(Optimizer& opt) {
  if (!options_.enable) return;
  OptState& state = states_[&opt];
  CREW_CHECK_T(StateError, state != OptState::UNSCALED,
               "unscale_() has already been called on this optimizer since the last update().");
  CREW_CHECK_T(StateError, state != OptState::STEPPED, "unscale_() is being called after step().");
  bool found = false;
  const double inv_scale = 1.0 / scale_;
  for (const Tensor& p : opt.parameters()) {
    Tensor g = p.grad();
    if (g.defined()) found = kernels::unscale_and_check_finite_(g, inv_scale) || found;
  }
  found_inf_ = sync_ ? sync_(found) : found;
  state = OptState::UNSCALED;
}

bool GradScaler::step(Optimizer& opt) {
  return step(opt, [&opt] { opt.step(); });
}

bool GradScaler::step(Optimizer& opt, const std::function<void()>& run_step) {
  if (!options_.enable) {
    run_step();
    return true;
  }
  CREW_CHECK_T(StateError, states_[&opt] != OptState::STEPPED,
               "step() has already been called since the last update().");
  if (states_[&opt] == OptState::INIT) unscale_(opt);
  last_step_skipped_ = found_inf_;
  if (!found_inf_) run_step();
  states_[&opt] = OptState::STEPPED;
  return !found_inf_;
}

void GradScaler::update() {
  if (!options_.enable) return;
  states_.clear();
  if (!options_.use_dynamic_loss_scaling) return;
  if (last_step_skipped_) {
    incr_count_ = 0;
    if (++decr_count_ == options_.decr_every_n_nan_or_inf) {
      scale_ *= options_.decr_ratio;
      decr_count_ = 0;
    }
  } else {
    decr_count_ = 0;
    if (++incr_count_ == options_.incr_every_n_steps) {
      scale_ *= options_.incr_ratio;
      incr_count_ = 0;
    }
  }
}

bool GradScaler::minimize(Optimizer& opt) {
  const bool stepped = step(opt);
  update();
  return stepped;
}

namespace {

// `o` with one field set by `set`, checked as a whole before it replaces the options.
template <typename Set>
GradScalerOptions with(GradScalerOptions o, Set set, void (*check)(const GradScalerOptions&)) {
  set(o);
  check(o);
  return o;
}

}  // namespace

void GradScaler::set_init_loss_scaling(double value) {
  options_ = with(options_, [&](GradScalerOptions& o) { o.init_loss_scaling = value; }, &check_options);
  scale_ = value;
}

void GradScaler::set_incr_ratio(double value) {
  options_ = with(options_, [&](GradScalerOptions& o) { o.incr_ratio = value; }, &check_options);
}

void GradScaler::set_decr_ratio(double value) {
  options_ = with(options_, [&](GradScalerOptions& o) { o.decr_ratio = value; }, &check_options);
}

void GradScaler::set_incr_every_n_steps(int64_t value) {
  options_ = with(options_, [&](GradScalerOptions& o) { o.incr_every_n_steps = value; }, &check_options);
}

void GradScaler::set_decr_every_n_nan_or_inf(int64_t value) {
  options_ = with(options_, [&](GradScalerOptions& o) { o.decr_every_n_nan_or_inf = value; }, &check_options);
}

StateDict GradScaler::state_dict() const {
  StateDict sd;
  if (!options_.enable) return sd;
  sd.insert("scale", Tensor::scalar(scale_, DType::FLOAT64));
  sd.insert("incr_ratio", Tensor::scalar(options_.incr_ratio, DType::FLOAT64));
  sd.insert("decr_ratio", Tensor::scalar(options_.decr_ratio, DType::FLOAT64));
  sd.insert("incr_every_n_steps",
            Tensor::scalar(static_cast<double>(options_.incr_every_n_steps), DType::INT64));
  sd.insert("decr_every_n_nan_or_inf",
            Tensor::scalar(static_cast<double>(options_.decr_every_n_nan_or_inf), DType::INT64));
  sd.insert("incr_count", Tensor::scalar(static_cast<double>(incr_count_), DType::INT64));
  sd.insert("decr_count", Tensor::scalar(static_cast<double>(decr_count_), DType::INT64));
  sd.insert("use_dynamic_loss_scaling",
            Tensor::scalar(options_.use_dynamic_loss_scaling ? 1.0 : 0.0, DType::INT64));
  return sd;
}

void GradScaler::set_state_dict(const StateDict& state) {
  if (!options_.enable) return;
  CREW_CHECK_T(StateError, !state.empty(),
               "GradScaler.set_state_dict: the state is empty, possibly because it was saved from a disabled "
               "GradScaler");
  // Read and check everything first; change nothing on an error.
  GradScalerOptions o = options_;
  const double scale = scalar_entry(state, "scale");
  o.incr_ratio = scalar_entry(state, "incr_ratio");
  o.decr_ratio = scalar_entry(state, "decr_ratio");
  o.incr_every_n_steps = static_cast<int64_t>(scalar_entry(state, "incr_every_n_steps"));
  o.decr_every_n_nan_or_inf = static_cast<int64_t>(scalar_entry(state, "decr_every_n_nan_or_inf"));
  o.use_dynamic_loss_scaling = scalar_entry(state, "use_dynamic_loss_scaling") != 0.0;
  const auto incr = static_cast<int64_t>(scalar_entry(state, "incr_count"));
  const auto decr = static_cast<int64_t>(scalar_entry(state, "decr_count"));
  check_options(o);
  CREW_CHECK(std::isfinite(scale) && scale > 0,
             "GradScaler.set_state_dict: 'scale' must be finite and > 0, got ", scale);
  CREW_CHECK(incr >= 0 && decr >= 0, "GradScaler.set_state_dict: negative counts ", incr, ", ", decr);
  options_ = o;
  scale_ = scale;
  incr_count_ = incr;
  decr_count_ = decr;
}

}  // namespace crew::optim
