#include "crew/optim/optimizer.h"

#include <algorithm>
#include <cmath>
#include <tuple>
#include <unordered_set>

#include "crew/core/check.h"
#include "crew/tensor/kernels/fill_cast.h"

namespace crew::optim {
namespace {

constexpr const char* kStepKey = "@step";
constexpr const char* kLrKey = "@lr";
constexpr const char* kSchedulerPrefix = "@lr_scheduler.";
constexpr const char* kMasterSuffix = ".master_weight";

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

NamedParameters detail::number_parameters(std::vector<Tensor> params) {
  NamedParameters out;
  out.reserve(params.size());
  for (size_t i = 0; i < params.size(); ++i) out.emplace_back(std::to_string(i), std::move(params[i]));
  return out;
}

Optimizer::Optimizer(std::string name, NamedParameters parameters, LearningRate lr,
                     std::vector<AccumulatorSpec> accumulators)
    : name_(std::move(name)), lr_(std::move(lr)), accumulator_specs_(std::move(accumulators)) {
  CREW_CHECK(!parameters.empty(), name_, ": the parameter list is empty");
  std::unordered_set<const TensorImpl*> seen_tensors;
  std::unordered_set<std::string> seen_names;
  for (auto& [pname, p] : parameters) {
    CREW_CHECK(p.defined(), name_, ": parameter '", pname, "' is undefined");
    CREW_CHECK(is_floating(p.dtype()), name_, ": parameter '", pname, "' has dtype ", dtype_name(p.dtype()),
               "; only float32/float64 parameters can be optimized");
    CREW_CHECK(seen_tensors.insert(p.impl()).second, name_, ": parameter '", pname, "' is listed twice");
    CREW_CHECK(seen_names.insert(pname).second, name_, ": duplicate parameter name '", pname, "'");
    CREW_CHECK(pname.find('@') == std::string::npos, name_, ": parameter name '", pname,
               "' must not contain '@'");
    names_.push_back(pname);
    params_.push_back(p);
  }
  if (!lr_.scheduler()) check_lr(lr_.value());
  for (const auto& spec : accumulator_specs_) accumulators_[spec.name].resize(params_.size());
  master_weights_.resize(params_.size());
}

void Optimizer::set_multi_precision(bool keep_master_weights) {
  multi_precision_ = keep_master_weights;
  if (!multi_precision_) std::fill(master_weights_.begin(), master_weights_.end(), Tensor());
}

DType Optimizer::state_dtype(size_t index) const {
  const DType d = params_[index].dtype();
  return is_low_precision(d) ? DType::FLOAT32 : d;
}

Tensor Optimizer::update_target(size_t index, const Tensor& grad_buffer) {
  const Tensor& p = params_[index];
  if (!is_low_precision(p.dtype())) return p;
  Tensor& master = master_weights_[index];
  if (!master.defined() || !multi_precision_) master = p.to(DType::FLOAT32);
  Tensor g;
  if (p.grad().defined() && grad_buffer.defined() && grad_buffer.place() == p.place()) {
    g = grad_buffer.slice(0, p.numel()).view(p.shape());
    kernels::cast_kernel.get(p.place().type)(p.grad(), g);
  } else if (p.grad().defined()) {
    g = p.grad().to(DType::FLOAT32);
  }
  master.set_grad(g);
  return master;
}

Tensor Optimizer::float_grad_buffer() const {
  int64_t n = 0;
  Place place = CPUPlace();
  for (const Tensor& p : params_) {
    if (is_low_precision(p.dtype()) && p.grad().defined() && p.numel() > n) {
      n = p.numel();
      place = p.place();
    }
  }
  return n > 0 ? Tensor::uninitialized({n}, DType::FLOAT32, place) : Tensor();
}

void Optimizer::check_lr(double lr) const {
  CREW_CHECK(std::isfinite(lr) && lr >= 0.0, name_, ": learning rate must be finite and >= 0, got ", lr);
}

void Optimizer::set_lr(double lr) {
  CREW_CHECK_T(StateError, !lr_.scheduler(), name_,
               ": set_lr cannot be used while the optimizer follows an LRScheduler");
  check_lr(lr);
  lr_ = LearningRate(lr);
}

const AccumulatorSpec* Optimizer::find_spec(const std::string& acc) const {
  for (const auto& spec : accumulator_specs_) {
    if (spec.name == acc) return &spec;
  }
  return nullptr;
}

Tensor& Optimizer::accumulator(const std::string& acc, size_t index, double init) {
  const AccumulatorSpec* spec = find_spec(acc);
  CREW_INTERNAL_ASSERT(spec != nullptr, name_, " uses undeclared accumulator ", acc);
  Tensor& t = accumulators_[acc].at(index);
  if (!t.defined()) {
    const Tensor& p = params_[index];
    // Scalars (Adam's beta powers) stay in host memory; the rest lives with its parameter.
    t = spec->scalar ? Tensor::scalar(init, DType::FLOAT64)
                     : Tensor::full(p.shape(), init, state_dtype(index), p.place());
  }
  return t;
}

void Optimizer::step() {
  const double lr = get_lr();
  // 16-bit parameters are updated (and clipped) as float32 master weights.
  // Without clipping each float32 gradient copy is made just before its update and freed after
  // it, so at most one lives beside the 16-bit gradients (not a float32 copy of all of them).
  std::vector<Tensor> targets(params_.size());
  const Tensor grad_buffer = grad_clip_ ? Tensor() : float_grad_buffer();
  if (grad_clip_) {
    for (size_t i = 0; i < params_.size(); ++i) targets[i] = update_target(i, Tensor());
    (*grad_clip_)(targets);
  }
  for (size_t i = 0; i < params_.size(); ++i) {
    Tensor& p = params_[i];
    if (!grad_clip_) targets[i] = update_target(i, grad_buffer);
    Tensor& t = targets[i];
    Tensor g = t.grad();
    if (!g.defined()) continue;
    CREW_CHECK(g.shape() == p.shape(), name_, ".step: gradient of '", names_[i], "' has shape ",
               shape_str(g.shape()), ", parameter has ", shape_str(p.shape()));
    CREW_CHECK(g.dtype() == t.dtype(), name_, ".step: gradient of '", names_[i], "' has dtype ",
               dtype_name(g.dtype()), ", parameter has ", dtype_name(p.dtype()));
    update(i, t, g, lr);
    if (t.is_same(p)) {
      p.bump_version();  // a graph that saved p before the step must not run backward on it
    } else {
      t.set_grad(Tensor());
      kernels::cast_kernel.get(p.place().type)(t, p);  // rounded once, straight into p
      p.bump_version();
    }
    targets[i] = Tensor();
  }
  ++step_count_;
}

void Optimizer::clear_grad(bool set_to_zero) {
  for (Tensor& p : params_) p.clear_grad(set_to_zero);
}

StateDict Optimizer::state_dict() const {
  StateDict sd;
  for (size_t i = 0; i < params_.size(); ++i) {
    for (const auto& spec : accumulator_specs_) {
      const Tensor& t = accumulators_.at(spec.name)[i];
      if (t.defined()) sd.insert(names_[i] + "." + spec.name, t.clone());
    }
    if (multi_precision_ && master_weights_[i].defined())
      sd.insert(names_[i] + kMasterSuffix, master_weights_[i].clone());
  }
  sd.insert(kStepKey, Tensor::scalar(static_cast<double>(step_count_), DType::INT64));
  if (lr_.scheduler()) {
    for (const auto& [key, t] : lr_.scheduler()->state_dict()) sd.insert(kSchedulerPrefix + key, t);
  } else {
    sd.insert(kLrKey, Tensor::scalar(lr_.value(), DType::FLOAT64));
  }
  return sd;
}

void Optimizer::set_state_dict(const StateDict& state) {
  // Parse and validate every key first; apply only when all are good.
  std::vector<std::tuple<std::string, size_t, Tensor>> accs;  // (accumulator, index, value)
  std::vector<std::pair<size_t, Tensor>> masters;             // (index, float32 master weight)
  StateDict scheduler_state;
  for (const auto& [key, t] : state) {
    if (key == kStepKey || key == kLrKey) continue;
    if (key.rfind(kSchedulerPrefix, 0) == 0) {
      scheduler_state.insert(key.substr(std::string(kSchedulerPrefix).size()), t);
      continue;
    }
    if (ends_with(key, kMasterSuffix)) {
      masters.emplace_back(check_master_entry(key, t), t);
      continue;
    }
    auto [acc, index] = check_accumulator_entry(key, t);
    accs.emplace_back(std::move(acc), index, t);
  }
  const int64_t steps = check_step_entry(state);
  restore_lr(state, scheduler_state);
  for (auto& [acc, list] : accumulators_) std::fill(list.begin(), list.end(), Tensor());
  for (auto& [acc, index, t] : accs) {
    const Tensor& p = params_[index];
    const bool scalar = find_spec(acc)->scalar;
    const DType dtype = scalar ? DType::FLOAT64 : state_dtype(index);
    const Place place = scalar ? CPUPlace() : p.place();
    Tensor value = t.dtype() == dtype ? t.clone() : t.to(dtype);
    accumulators_[acc][index] = value.to(place);
  }
  std::fill(master_weights_.begin(), master_weights_.end(), Tensor());
  for (auto& [index, t] : masters) master_weights_[index] = t.to(DType::FLOAT32).to(params_[index].place());
  step_count_ = steps;
}

std::pair<std::string, size_t> Optimizer::check_accumulator_entry(const std::string& key,
                                                                  const Tensor& t) const {
  size_t dot = key.rfind('.');
  CREW_CHECK(dot != std::string::npos, name_, ".set_state_dict: unexpected key '", key, "'");
  std::string pname = key.substr(0, dot);
  std::string acc = key.substr(dot + 1);
  const AccumulatorSpec* spec = find_spec(acc);
  CREW_CHECK(spec != nullptr, name_, ".set_state_dict: key '", key, "' names accumulator '", acc, "', which ",
             name_, " does not have");
  auto pos = std::find(names_.begin(), names_.end(), pname);
  CREW_CHECK(pos != names_.end(), name_, ".set_state_dict: key '", key, "' names parameter '", pname,
             "', which this optimizer does not hold");
  size_t index = static_cast<size_t>(pos - names_.begin());
  const Tensor& p = params_[index];
  const Shape want = spec->scalar ? Shape{} : p.shape();
  CREW_CHECK(t.shape() == want, name_, ".set_state_dict: shape mismatch for '", key, "': state has ",
             shape_str(t.shape()), ", expected ", shape_str(want));
  return {std::move(acc), index};
}

size_t Optimizer::check_master_entry(const std::string& key, const Tensor& t) const {
  const std::string pname = key.substr(0, key.size() - std::string(kMasterSuffix).size());
  auto pos = std::find(names_.begin(), names_.end(), pname);
  CREW_CHECK(pos != names_.end(), name_, ".set_state_dict: key '", key, "' names parameter '", pname,
             "', which this optimizer does not hold");
  const auto index = static_cast<size_t>(pos - names_.begin());
  CREW_CHECK(is_low_precision(params_[index].dtype()), name_, ".set_state_dict: key '", key,
             "' is a master weight, but parameter '", pname, "' is ", dtype_name(params_[index].dtype()));
  CREW_CHECK(t.shape() == params_[index].shape(), name_, ".set_state_dict: shape mismatch for '", key,
             "': state has ", shape_str(t.shape()), ", expected ", shape_str(params_[index].shape()));
  return index;
}

int64_t Optimizer::check_step_entry(const StateDict& state) const {
  CREW_CHECK(state.contains(kStepKey), name_, ".set_state_dict: missing key '", kStepKey, "'");
  const Tensor& step_t = state.at(kStepKey);
  CREW_CHECK(step_t.numel() == 1, name_, ".set_state_dict: '", kStepKey, "' must be a scalar, got shape ",
             shape_str(step_t.shape()));
  int64_t steps = step_t.to_vector<int64_t>()[0];
  CREW_CHECK(steps >= 0, name_, ".set_state_dict: negative step count ", steps);
  return steps;
}

void Optimizer::restore_lr(const StateDict& state, const StateDict& scheduler_state) {
  if (lr_.scheduler()) {
    CREW_CHECK(!scheduler_state.empty(), name_,
               ".set_state_dict: the optimizer follows an LRScheduler but the state has no '",
               kSchedulerPrefix, "*' keys");
    lr_.scheduler()->set_state_dict(scheduler_state);
    return;
  }
  CREW_CHECK(state.contains(kLrKey), name_, ".set_state_dict: missing key '", kLrKey,
             "' (a state saved with an LRScheduler cannot resume a constant learning rate)");
  double lr = state.at(kLrKey).item();
  check_lr(lr);
  lr_ = LearningRate(lr);
}

}  // namespace crew::optim
