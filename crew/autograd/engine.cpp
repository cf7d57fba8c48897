#include "crew/autograd/engine.h"

#include <functional>
#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "crew/autograd/autocast.h"
#include "crew/autograd/autograd_meta.h"
#include "crew/autograd/function.h"
#include "crew/tensor/kernels/broadcast.h"

namespace crew::autograd {
namespace {

// A gradient buffer we may keep as a leaf's grad() (or add into) must share storage with
// nothing else: the rule backward functions reuse a gradient by (autograd::disposable_grad).
bool sole_owner(const Tensor& t) { return disposable_grad(t); }

Tensor owned(Tensor g) {
  if (sole_owner(g)) return g;
  return g.clone();
}

void accumulate(Tensor& buffer, Tensor contribution) {
  if (!contribution.defined()) return;
  if (!buffer.defined()) {
    buffer = std::move(contribution);
  } else if (sole_owner(buffer) && buffer.shape() == contribution.shape() &&
             buffer.dtype() == contribution.dtype()) {
    // Nobody else sees this buffer (a node's fresh output): add into it, no new tensor.
    kernels::add_inplace(buffer, contribution);
  } else {
    buffer = kernels::binary(kernels::BinaryOp::ADD, buffer, contribution, "backward (accumulate)");
  }
}

// grad passed through each hook in turn (a defined result replaces it).
Tensor apply_grad_hooks(const std::vector<GradHookEntry>& hooks, Tensor grad, const char* what) {
  if (hooks.empty() || !grad.defined()) return grad;
  const std::vector<GradHookEntry> copy = hooks;  // a hook may remove itself
  for (const GradHookEntry& h : copy) {
    Tensor out = h.fn(grad);
    if (!out.defined()) continue;
    CREW_CHECK(out.shape() == grad.shape() && out.dtype() == grad.dtype(), "register_hook: the hook on the ",
               what, " gradient returned ", shape_str(out.shape()), " ", dtype_name(out.dtype()), " for a gradient of ",
               shape_str(grad.shape()), " ", dtype_name(grad.dtype()));
    grad = std::move(out);
  }
  return grad;
}

void complete_leaf(const std::shared_ptr<TensorImpl>& leaf, Tensor buffer) {
  AutogradMeta& meta = *leaf->autograd;
  buffer = apply_grad_hooks(meta.grad_hooks, std::move(buffer), "leaf");
  if (buffer.defined()) {
    if (meta.grad_zero_pending && buffer.shape() == meta.grad.shape() && buffer.dtype() == meta.grad.dtype()) {
      // clear_grad(true)'s zeros were never written nor read: the fresh gradient is the sum.
      meta.grad = owned(std::move(buffer));
      meta.grad_zero_pending = false;
    } else if (meta.grad.defined()) {
      kernels::add_inplace(Tensor(leaf).grad(), buffer);  // grad() writes pending zeros first
    } else {
      meta.grad = owned(std::move(buffer));
    }
  }
  if (meta.hooks.empty()) return;
  const std::vector<GradReadyHook> hooks = meta.hooks;  // a hook may remove itself
  const Tensor leaf_tensor(leaf);
  for (const GradReadyHook& h : hooks) h.fn(leaf_tensor);
}

struct Graph {
  std::vector<std::shared_ptr<Node>> nodes;  // keeps every node alive for the pass
  std::unordered_map<Node*, int> node_deps;  // incoming edges still to arrive
  std::unordered_map<TensorImpl*, int> leaf_deps;
};

Graph discover(const std::vector<std::shared_ptr<Node>>& roots) {
  Graph g;
  std::vector<Node*> stack;
  for (const std::shared_ptr<Node>& root : roots) {
    if (g.node_deps.emplace(root.get(), 0).second) {
      g.nodes.push_back(root);
      stack.push_back(root.get());
    }
  }
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    CREW_CHECK_T(StateError, !n->released, "backward: the graph through '", n->name,
                 "' was freed by an earlier backward; pass retain_graph=true to backpropagate twice");
    for (const Edge& e : n->next_edges) {
      if (e.fn) {
        auto [it, inserted] = g.node_deps.emplace(e.fn.get(), 0);
        ++it->second;
        if (inserted) {
          g.nodes.push_back(e.fn);
          stack.push_back(e.fn.get());
        }
      } else if (e.leaf) {
        ++g.leaf_deps[e.leaf.get()];
      }
    }
  }
  return g;
}

struct Later {
  bool operator()(const Node* a, const Node* b) const { return a->sequence_nr < b->sequence_nr; }
};

// What a pass does with each leaf's complete gradient, and with each node's gradient before
// the node runs (node may be empty; false from it stops the gradient there).
struct Sinks {
  std::function<void(const std::shared_ptr<TensorImpl>&, Tensor)> leaf;
  std::function<bool(Node*, const Tensor&)> node;
};

// Runs the nodes of graph in reverse creation order from the gradients seeded in node_buf.
void propagate(Graph& graph, std::unordered_map<Node*, Tensor> node_buf, bool retain_graph,
               const Sinks& sinks) {
  std::unordered_map<TensorImpl*, Tensor> leaf_buf;
  std::priority_queue<Node*, std::vector<Node*>, Later> ready;
  for (const auto& [node, deps] : graph.node_deps) {
    if (deps == 0) ready.push(node);
  }
  while (!ready.empty()) {
    Node* n = ready.top();
    ready.pop();
    Tensor grad = apply_grad_hooks(n->grad_hooks, std::move(node_buf[n]), n->name);
    node_buf.erase(n);
    const bool flows = !sinks.node || sinks.node(n, grad);
    std::vector<Tensor> outs;
    for (const SavedVersion& s : n->saved) s.check(n->name);
    if (grad.defined() && flows) outs = n->backward(grad, n->needs);
    grad = Tensor();
    for (size_t i = 0; i < n->next_edges.size(); ++i) {
      const Edge& e = n->next_edges[i];
      if (!e.valid()) continue;
      Tensor gi = i < outs.size() ? std::move(outs[i]) : Tensor();
      CREW_INTERNAL_ASSERT(!gi.defined() || gi.shape() == n->input_shapes[i], "backward of '", n->name,
                           "' returned a gradient of shape ", gi.defined() ? shape_str(gi.shape()) : "",
                           " for input ", i, " of shape ", shape_str(n->input_shapes[i]));
      if (e.fn) {
        accumulate(node_buf[e.fn.get()], std::move(gi));
        if (--graph.node_deps[e.fn.get()] == 0) ready.push(e.fn.get());
      } else {
        Tensor& buf = leaf_buf[e.leaf.get()];
        accumulate(buf, std::move(gi));
        if (--graph.leaf_deps[e.leaf.get()] == 0) {
          Tensor done = std::move(buf);
          leaf_buf.erase(e.leaf.get());
          sinks.leaf(e.leaf, std::move(done));
        }
      }
    }
    if (!retain_graph) {
      // Frees what the node saved, and cuts its edges so that a long graph is torn down
      // here, iteratively, rather than by a deep chain of destructors later.
      n->backward = nullptr;
      n->saved.clear();
      n->next_edges.clear();
      n->released = true;
    }
  }
}

void check_root(const Tensor& root, const Tensor& grad_root, const char* op) {
  CREW_CHECK_T(StateError, root.requires_grad(), op, ": tensor of shape ", shape_str(root.shape()),
               " has stop_gradient=true, so there is nothing to differentiate");
  CREW_CHECK(grad_root.defined() && grad_root.shape() == root.shape() && grad_root.dtype() == root.dtype(),
             op, ": gradient ", grad_root.defined() ? shape_str(grad_root.shape()) : "undefined",
             " does not match the tensor ", shape_str(root.shape()), " ", dtype_name(root.dtype()));
}

}  // namespace

void run_backward(const Tensor& root, const Tensor& grad_root, bool retain_graph) {
  check_root(root, grad_root, "backward");
  NoGradGuard no_grad;  // backward functions and hooks record nothing
  amp::AutocastGuard no_autocast(amp::autocast_off());  // gradients keep their dtypes
  AutogradMeta& root_meta = *root.impl()->autograd;
  if (!root_meta.grad_fn) {
    complete_leaf(root.impl_ptr(), grad_root);
    return;
  }
  Graph graph = discover({root_meta.grad_fn});
  propagate(graph, {{root_meta.grad_fn.get(), grad_root}}, retain_graph, Sinks{complete_leaf, nullptr});
}

std::vector<Tensor> partial_grad(const std::vector<Tensor>& roots, const std::vector<Tensor>& grad_roots,
                                 const std::vector<Tensor>& inputs, const std::vector<Tensor>& blocked,
                                 bool retain_graph) {
  CREW_CHECK(roots.size() == grad_roots.size(), "grad: ", roots.size(), " outputs but ", grad_roots.size(),
             " grad_outputs");
  NoGradGuard no_grad;
  amp::AutocastGuard no_autocast(amp::autocast_off());
  std::vector<Tensor> out(inputs.size());
  std::unordered_map<const void*, std::vector<size_t>> slots;  // a leaf's impl or an output's node
  for (size_t k = 0; k < inputs.size(); ++k) {
    const AutogradMeta* m = inputs[k].requires_grad() ? meta_if(inputs[k]) : nullptr;
    if (m) slots[m->grad_fn ? static_cast<const void*>(m->grad_fn.get()) : inputs[k].impl()].push_back(k);
  }
  auto deliver = [&](const void* key, const Tensor& g) {
    auto it = slots.find(key);
    if (it == slots.end() || !g.defined()) return;
    for (size_t k : it->second) accumulate(out[k], g);
  };
  std::unordered_set<const void*> stops;
  for (const Tensor& b : blocked) {
    const AutogradMeta* m = b.requires_grad() ? meta_if(b) : nullptr;
    if (m && m->grad_fn) stops.insert(m->grad_fn.get());
  }
  std::vector<std::shared_ptr<Node>> nodes;
  std::unordered_map<Node*, Tensor> seeds;
  for (size_t i = 0; i < roots.size(); ++i) {
    check_root(roots[i], grad_roots[i], "grad");
    const std::shared_ptr<Node>& fn = roots[i].impl()->autograd->grad_fn;
    if (!fn) {
      deliver(roots[i].impl(), grad_roots[i]);
      continue;
    }
    nodes.push_back(fn);
    accumulate(seeds[fn.get()], grad_roots[i]);
  }
  Graph graph = discover(nodes);
  Sinks sinks{[&](const std::shared_ptr<TensorImpl>& leaf, Tensor g) {
                deliver(leaf.get(), apply_grad_hooks(leaf->autograd->grad_hooks, std::move(g), "leaf"));
              },
              [&](Node* n, const Tensor& g) {
                deliver(n, g);
                return stops.count(n) == 0;
              }};
  propagate(graph, std::move(seeds), retain_graph, sinks);
  for (Tensor& g : out) {
    if (g.defined()) g = owned(std::move(g));
  }
  return out;
}

std::vector<Tensor> reachable_leaves(const std::vector<Tensor>& roots) {
  std::vector<Tensor> leaves;
  std::unordered_set<const TensorImpl*> seen_leaves;
  std::unordered_set<const Node*> seen_nodes;
  std::vector<const Node*> stack;
  auto add_leaf = [&](const std::shared_ptr<TensorImpl>& impl) {
    if (seen_leaves.insert(impl.get()).second) leaves.emplace_back(impl);
  };
  for (const Tensor& r : roots) {
    if (!r.requires_grad()) continue;
    const AutogradMeta* m = meta_if(r);
    if (!m->grad_fn) {
      add_leaf(r.impl_ptr());
    } else if (seen_nodes.insert(m->grad_fn.get()).second) {
      stack.push_back(m->grad_fn.get());
    }
  }
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    for (const Edge& e : n->next_edges) {
      if (e.fn) {
        if (seen_nodes.insert(e.fn.get()).second) stack.push_back(e.fn.get());
      } else if (e.leaf) {
        add_leaf(e.leaf);
      }
    }
  }
  return leaves;
}

}  // namespace crew::autograd
