#pragma once
// The autograd state of a tensor and the graph nodes behind it (internal to crew; ops
// record nodes through crew/autograd/function.h).
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "crew/autograd/autograd.h"
#include "crew/autograd/saved_version.h"
#include "crew/tensor/tensor.h"

namespace crew::autograd {

struct Node;

// Where a gradient flows: into a node's single output, or into a leaf's grad().
struct Edge {
  std::shared_ptr<Node> fn;          // set for a non-leaf input
  std::shared_ptr<TensorImpl> leaf;  // set for a leaf input with stop_gradient = false
  bool valid() const { return fn != nullptr || leaf != nullptr; }
};

// Computes the gradients of a node's inputs from the gradient of its output. needs[i] says
// whether input i wants one; entries for other inputs may be left undefined.
using BackwardFn = std::function<std::vector<Tensor>(const Tensor& grad_output, const std::vector<bool>& needs)>;

struct GradHookEntry {
  HookId id;
  GradHook fn;
};

// One recorded operation with a single output.
struct Node {
  const char* name = "";
  uint64_t sequence_nr = 0;          // creation order; later nodes run first in backward
  std::vector<Edge> next_edges;      // one per input, invalid where no gradient is needed
  std::vector<bool> needs;           // next_edges[i].valid()
  std::vector<Shape> input_shapes;   // for checking returned gradients
  BackwardFn backward;               // null once released (retain_graph = false)
  std::vector<SavedVersion> saved;   // what backward reads, checked before it runs
  bool released = false;
  std::vector<GradHookEntry> grad_hooks;  // register_grad_hook on the output
};

struct GradReadyHook {
  HookId id;
  std::function<void(const Tensor&)> fn;
};

struct AutogradMeta {
  bool stop_gradient = true;
  Tensor grad;
  // clear_grad(true) on a gradient nobody else holds: grad is logically zero but its bytes
  // are not written. Tensor::grad() writes the zeros before handing it out; the engine
  // replaces it with the first fresh gradient (no zero fill, no addition into zeros).
  bool grad_zero_pending = false;
  std::shared_ptr<Node> grad_fn;  // null for leaves
  std::vector<GradReadyHook> hooks;
  std::vector<GradHookEntry> grad_hooks;  // register_grad_hook on a leaf (a non-leaf's: its node's)
};

// The tensor's meta, created on first use.
AutogradMeta& meta_of(const Tensor& t);
// The tensor's meta or nullptr when autograd never touched it.
inline AutogradMeta* meta_if(const Tensor& t) { return t.defined() ? t.impl()->autograd.get() : nullptr; }

}  // namespace crew::autograd
