#pragma once
// Dynamic autograd ("dygraph"), the public surface. Operations on tensors whose
// stop_gradient is false record a graph; loss.backward() walks it once, in reverse
// topological order, on the calling thread, accumulating into each leaf's grad().
//
//   Tensor w = crew::uniform({4, 2}, -1, 1).set_stop_gradient(false);
//   Tensor loss = crew::mean(crew::matmul(x, w));
//   loss.backward();                 // w.grad() is now d loss / d w
//   { crew::NoGradGuard g; ... }     // nothing recorded inside
//
// Grad-ready hooks (what DataParallel hangs its bucketed all-reduce on): a hook registered on
// a leaf fires once per backward pass, on the thread running backward, right after that
// leaf's gradient for this pass is complete (all contributions accumulated into grad()).
// Hooks of different leaves fire in the order their gradients complete, which for a
// feed-forward net is the reverse of the order the parameters were used in forward.
#include <cstdint>
#include <functional>

#include "crew/tensor/tensor.h"

namespace crew {

// While alive on this thread, operations record no graph.
class NoGradGuard {
 public:
  NoGradGuard();
  ~NoGradGuard();
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool previous_;
};

bool is_grad_enabled();
void set_grad_enabled(bool enabled);

namespace autograd {

using HookId = uint64_t;
// fn(leaf) runs when leaf's gradient for the current backward pass is complete.
HookId register_grad_ready_hook(const Tensor& leaf, std::function<void(const Tensor& leaf)> fn);
void remove_grad_ready_hook(const Tensor& leaf, HookId id);

// Gradient hooks (Paddle's Tensor.register_hook): fn(grad) runs when the gradient of t (a
// leaf, or an op's output, with stop_gradient = false) is complete in a backward pass, before
// it flows on to t's inputs or into t's grad(); a defined result of grad's shape and dtype
// replaces it, an undefined one keeps it.
using GradHook = std::function<Tensor(const Tensor& grad)>;
HookId register_grad_hook(const Tensor& t, GradHook fn);
void remove_grad_hook(const Tensor& t, HookId id);

// Every leaf (stop_gradient = false, no grad_fn) reachable from `roots` through the graph.
std::vector<Tensor> reachable_leaves(const std::vector<Tensor>& roots);

}  // namespace autograd
}  // namespace crew
