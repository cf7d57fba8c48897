#pragma once
// crew::optim::Optimizer: the base of SGD, Momentum, Adam and AdamW (Paddle's
// paddle.optimizer.Optimizer). It holds the parameters, the learning rate (a constant or an
// LRScheduler), per-parameter accumulators (velocity, moments, ...) and a step count, and
// saves/restores all of it as a StateDict so a checkpoint resumes bit-exactly.
//
//   Adam opt(net->parameters(), {.learning_rate = 1e-3});
//   loss.backward();
//   opt.step();          // parameters whose grad is undefined are skipped
//   opt.clear_grad();
//   crew::save(opt.state_dict(), "opt.safetensors");
//
// state_dict keys: "<param>.<accumulator>" (e.g. "3.moment1", or "conv1.weight.moment1"
// when built from named parameters), "@step" (int64), "@lr" (float64, constant rate) or
// "@lr_scheduler.last_epoch" / "@lr_scheduler.last_lr" (with a schedule).
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "crew/optim/grad_clip.h"
#include "crew/optim/lr_scheduler.h"
#include "crew/tensor/state_dict.h"
#include "crew/tensor/tensor.h"

namespace crew::optim {

// A learning rate: a constant (implicitly from a double) or a shared schedule.
class LearningRate {
 public:
  LearningRate(double value) : value_(value) {}         // NOLINT(google-explicit-constructor)
  LearningRate(std::shared_ptr<LRScheduler> scheduler)  // NOLINT(google-explicit-constructor)
      : scheduler_(std::move(scheduler)) {}
  template <typename S>
  LearningRate(std::shared_ptr<S> scheduler)  // NOLINT(google-explicit-constructor)
      : scheduler_(std::static_pointer_cast<LRScheduler>(std::move(scheduler))) {}

  double value() const { return scheduler_ ? scheduler_->last_lr() : value_; }
  const std::shared_ptr<LRScheduler>& scheduler() const { return scheduler_; }

 private:
  double value_ = 0.0;
  std::shared_ptr<LRScheduler> scheduler_;
};

using NamedParameters = std::vector<std::pair<std::string, Tensor>>;

namespace detail {
// Names unnamed parameters "0", "1", ..., the keys their state_dict entries use.
NamedParameters number_parameters(std::vector<Tensor> params);
}  // namespace detail

// A per-parameter state tensor an optimizer keeps: either shaped like the parameter
// (moments, velocity) or a scalar (Adam's beta powers).
struct AccumulatorSpec {
  std::string name;
  bool scalar = false;
};

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // One update of every parameter that has a gradient (clipped first, with a grad_clip).
  void step();
  // Clears the gradients (to zeros when set_to_zero, Paddle's default).
  void clear_grad(bool set_to_zero = true);

  double get_lr() const { return lr_.value(); }
  // Sets a constant rate; StateError when the optimizer follows an LRScheduler.
  void set_lr(double lr);
  const std::shared_ptr<LRScheduler>& lr_scheduler() const { return lr_.scheduler(); }

  // Clipping applied at the start of every step(); null (the default) for none.
  void set_grad_clip(std::shared_ptr<GradientClip> clip) { grad_clip_ = std::move(clip); }
  const std::shared_ptr<GradientClip>& grad_clip() const { return grad_clip_; }

  const std::vector<Tensor>& parameters() const { return params_; }
  const std::vector<std::string>& parameter_names() const { return names_; }
  // Number of step() calls so far.
  int64_t step_count() const { return step_count_; }

  StateDict state_dict() const;
  // Restores a state_dict() of an optimizer of the same kind over the same parameters.
  // ValueError naming the key for an unknown parameter or accumulator, or a shape mismatch.
  void set_state_dict(const StateDict& state);

  const std::string& name() const { return name_; }

  // Paddle's multi_precision (set by crew.amp.decorate at level O2): a bfloat16/float16
  // parameter is updated through a float32 master copy kept across steps (and saved in
  // state_dict as "<param>.master_weight"), then written back rounded. Off, such a parameter
  // is still updated in float32, on a copy made from it each step. Either way its
  // accumulators are float32.
  void set_multi_precision(bool keep_master_weights);
  bool multi_precision() const { return multi_precision_; }
  // The float32 master weight of parameter `index`; undefined for float32/float64 ones or before
  // the first step.
  const Tensor& master_weight(size_t index) const { return master_weights_.at(index); }

 protected:
  // Unnamed parameters come numbered by detail::number_parameters.
  Optimizer(std::string name, NamedParameters parameters, LearningRate lr,
            std::vector<AccumulatorSpec> accumulators);

  // Updates parameter `index` in place from its gradient (same shape, float32 or float64).
  virtual void update(size_t index, Tensor& param, const Tensor& grad, double lr) = 0;
  // Accumulator `acc` of parameter `index`, created on first use filled with init: shaped
  // and typed like the parameter, or a float64 scalar for a scalar accumulator.
  Tensor& accumulator(const std::string& acc, size_t index, double init = 0.0);

 private:
  void check_lr(double lr) const;
  const AccumulatorSpec* find_spec(const std::string& acc) const;
  // set_state_dict's steps. An accumulator entry "<param>.<accumulator>" is checked against
  // this optimizer and gives (accumulator, parameter index); the step entry gives the count;
  // restore_lr checks the rate's entries, then sets the rate (the first change it makes).
  std::pair<std::string, size_t> check_accumulator_entry(const std::string& key, const Tensor& t) const;
  int64_t check_step_entry(const StateDict& state) const;
  void restore_lr(const StateDict& state, const StateDict& scheduler_state);
  // The dtype the update runs in for parameter `index`: float32 for 16-bit parameters.
  DType state_dtype(size_t index) const;
  // What step() updates for parameter `index`: the parameter, or its float32 master weight
  // carrying the gradient converted to float32 (into grad_buffer when that is defined and on
  // the parameter's place, else into a new tensor).
  Tensor update_target(size_t index, const Tensor& grad_buffer);
  // One float32 buffer for the largest 16-bit parameter's gradient, which every 16-bit
  // parameter's float32 gradient uses in turn; undefined when there is none.
  Tensor float_grad_buffer() const;
  size_t check_master_entry(const std::string& key, const Tensor& t) const;

  std::string name_;
  std::vector<Tensor> params_;
  std::vector<std::string> names_;
  LearningRate lr_;
  std::vector<AccumulatorSpec> accumulator_specs_;
  // accumulator name -> one tensor per parameter (undefined until first use).
  std::map<std::string, std::vector<Tensor>> accumulators_;
  int64_t step_count_ = 0;
  std::shared_ptr<GradientClip> grad_clip_;
  bool multi_precision_ = false;
  std::vector<Tensor> master_weights_;  // one per parameter; defined for 16-bit ones
};

}  // namespace crew::optim
