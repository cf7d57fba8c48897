#pragma once
// Automatic mixed precision (Paddle's paddle.amp.auto_cast): a thread-local state that the
// differentiable ops consult to choose the dtype they compute in. Inside an AutocastGuard:
//   - white-list ops (conv2d, linear, matmul) cast their float32 operands to the low dtype
//     (bfloat16 or float16) and run the 16-bit kernel;
//   - black-list ops (softmax, cross_entropy, layer_norm, sum, mean, ...) and ops that have
//     no 16-bit kernel (adaptive pooling, batch_norm, dropout, attention, ...) cast 16-bit
//     operands up to float32;
//   - the other ops (relu, add, ...) run in their operands' dtype; at level O1 mixed operands
//     (float32 and 16-bit) are promoted to float32, at O2 they are cast to the low dtype.
// The casts are crew::cast, recorded by autograd: a float32 weight used by a bfloat16 linear
// gets a float32 gradient. Backward passes run with autocast off.
//
//   crew::amp::AutocastGuard amp({.dtype = DType::BFLOAT16});
//   Tensor logits = net->forward(x);          // conv/linear in bfloat16
//   Tensor loss = nn::functional::cross_entropy(logits, y);  // float32
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "crew/tensor/tensor.h"

namespace crew::amp {

// Paddle's levels: O0 off, O1 lists, O2 everything but the black list in low precision.
enum class AmpLevel { O0, O1, O2 };

struct AutocastOptions {
  bool enabled = true;
  DType dtype = DType::FLOAT16;  // bfloat16 or float16
  AmpLevel level = AmpLevel::O1;
  // Op names added to the white / black list (Paddle's custom_white_list and
  // custom_black_list); a name in both is a ValueError.
  std::set<std::string> custom_white_list;
  std::set<std::string> custom_black_list;
};

// Options with enabled = false (for a guard that turns autocast off inside).
AutocastOptions autocast_off();

// The state of this thread: enabled is false outside every AutocastGuard.
const AutocastOptions& autocast_state();
// True while an enabled guard with a level other than O0 is alive on this thread.
bool autocast_enabled();

// Sets the thread's autocast state while alive; restores the previous one after. Nests.
class AutocastGuard {
 public:
  explicit AutocastGuard(AutocastOptions options);
  ~AutocastGuard();
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

 private:
  AutocastOptions previous_;
};

// Paddle's default lists, in crew's op names.
const std::set<std::string>& default_white_list();
const std::set<std::string>& default_black_list();

// What op `op` does with its floating operands under the current state.
enum class CastPolicy { KEEP, LOW, FLOAT32, PROMOTE };
CastPolicy cast_policy(const std::string& op);

// `inputs` as op `op` should see them under the current state: unchanged when autocast is
// off; undefined, integer and float64 tensors are never cast.
std::vector<Tensor> autocast_inputs(const std::string& op, std::vector<Tensor> inputs);
namespace detail {
// autocast_inputs(op, inputs), or nullopt when no input changed.
std::optional<std::vector<Tensor>> autocast_changed(const char* op, std::vector<Tensor> inputs);
}  // namespace detail

// For an op's entry: nullopt (at the cost of one thread-local read when autocast is off)
// unless autocast casts one of the operands; then the operands to call the op again with:
//   if (auto in = amp::autocast_operands("matmul", a, b)) return matmul((*in)[0], (*in)[1]);
template <typename... Ts>
std::optional<std::vector<Tensor>> autocast_operands(const char* op, const Ts&... operands) {
  if (!autocast_enabled()) return std::nullopt;
  return detail::autocast_changed(op, {operands...});
}

}  // namespace crew::amp
