// Autocast state and policy (crew/autograd/autocast.h).
#include "crew/autograd/autocast.h"

#include <utility>

#include "crew/autograd/ops_cast.h"
#include "crew/core/check.h"

namespace crew::amp {
namespace {

thread_local AutocastOptions t_state = autocast_off();

// Ops that refuse 16-bit operands (docs/kernels.md, "Low precision"): they run in float32
// under autocast, whatever the lists say, rather than raising a DTypeError.
const std::set<std::string>& float32_only_ops() {
  static const std::set<std::string> ops = {
      "dropout", "embedding",
      "mse_loss", "exp", "log", "pow", "resample2d", "local_response_norm", "elu", "selu", "swish", "mish",
      "hardsigmoid", "hardtanh", "softsign", "tanhshrink",
      // the tensor math of ops_math.h
      "abs", "sqrt", "rsqrt", "sin", "cos", "tanh", "sigmoid", "erf", "sign", "floor", "clip", "where",
      "amax", "amin", "topk", "sort",
      // masks: exact in float32 (every 16-bit value is a float32)
      "equal", "not_equal", "less_than", "less_equal", "greater_than", "greater_equal", "isclose", "isnan",
      "isinf", "isfinite"};
  return ops;
}

bool contains(const std::set<std::string>& s, const std::string& op) { return s.count(op) != 0; }

bool castable(const Tensor& t) {
  return t.defined() && (t.dtype() == DType::FLOAT32 || is_low_precision(t.dtype()));
}

}  // namespace

const std::set<std::string>& default_white_list() {
  static const std::set<std::string> ops = {"conv2d", "linear", "matmul"};
  return ops;
}

const std::set<std::string>& default_black_list() {
  static const std::set<std::string> ops = {
      "softmax", "log_softmax", "cross_entropy", "layer_norm", "sum",    "mean", "exp", "log",
      "pow",     "mse_loss",    "square",        "prod",       "cumsum", "var",  "std", "norm"};
  return ops;
}

AutocastOptions autocast_off() {
  AutocastOptions o;
  o.enabled = false;
  return o;
}

const AutocastOptions& autocast_state() { return t_state; }

bool autocast_enabled() { return t_state.enabled && t_state.level != AmpLevel::O0; }

AutocastGuard::AutocastGuard(AutocastOptions options) : previous_(t_state) {
  if (options.enabled) {
    CREW_CHECK(is_low_precision(options.dtype), "auto_cast: dtype must be bfloat16 or float16, got ",
               dtype_name(options.dtype));
    for (const std::string& op : options.custom_white_list) {
      CREW_CHECK(!contains(options.custom_black_list, op), "auto_cast: op '", op,
                 "' is in both custom_white_list and custom_black_list");
    }
  }
  t_state = std::move(options);
}

AutocastGuard::~AutocastGuard() { t_state = std::move(previous_); }

CastPolicy cast_policy(const std::string& op) {
  if (!autocast_enabled()) return CastPolicy::KEEP;
  const AutocastOptions& s = t_state;
  if (contains(s.custom_black_list, op)) return CastPolicy::FLOAT32;
  if (contains(s.custom_white_list, op)) return CastPolicy::LOW;
  if (contains(float32_only_ops(), op) || contains(default_black_list(), op)) return CastPolicy::FLOAT32;
  if (contains(default_white_list(), op)) return CastPolicy::LOW;
  return s.level == AmpLevel::O2 ? CastPolicy::LOW : CastPolicy::PROMOTE;
}

std::vector<Tensor> autocast_inputs(const std::string& op, std::vector<Tensor> inputs) {
  CastPolicy policy = cast_policy(op);
  if (policy == CastPolicy::KEEP) return inputs;
  if (policy == CastPolicy::PROMOTE) {
    // Mixed float32 and 16-bit operands meet in float32; otherwise nothing changes.
    bool any32 = false;
    bool any16 = false;
    for (const Tensor& t : inputs) {
      any32 = any32 || (t.defined() && t.dtype() == DType::FLOAT32);
      any16 = any16 || (t.defined() && is_low_precision(t.dtype()));
    }
    if (!(any32 && any16)) return inputs;
    policy = CastPolicy::FLOAT32;
  }
  const DType target = policy == CastPolicy::LOW ? t_state.dtype : DType::FLOAT32;
  for (Tensor& t : inputs) {
    if (castable(t) && t.dtype() != target) t = cast(t, target);
  }
  return inputs;
}

std::optional<std::vector<Tensor>> detail::autocast_changed(const char* op, std::vector<Tensor> inputs) {
  std::vector<Tensor> cast_inputs = autocast_inputs(op, inputs);
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!cast_inputs[i].is_same(inputs[i])) return cast_inputs;
  }
  return std::nullopt;
}

}  // namespace crew::amp
