#include "crew/autograd/function.h"

#include <atomic>

namespace crew::autograd {
namespace {
std::atomic<uint64_t> g_next_sequence_nr{0};
}

AutogradMeta& meta_of(const Tensor& t) {
  TensorImpl* impl = t.impl();
  CREW_CHECK_T(StateError, impl != nullptr, "autograd: tensor is undefined");
  if (!impl->autograd) impl->autograd = std::make_shared<AutogradMeta>();
  return *impl->autograd;
}

bool disposable_grad(const Tensor& g) {
  return g.defined() && g.impl_ptr().use_count() == 1 && g.impl()->storage.use_count() == 1 &&
         g.impl()->autograd == nullptr;
}

bool should_record(std::initializer_list<const Tensor*> inputs) {
  if (!is_grad_enabled()) return false;
  for (const Tensor* t : inputs) {
    if (t->requires_grad()) return true;
  }
  return false;
}

bool should_record(const std::vector<Tensor>& inputs) {
  if (!is_grad_enabled()) return false;
  for (const Tensor& t : inputs) {
    if (t.requires_grad()) return true;
  }
  return false;
}

void record(const Tensor& output, const char* name, const std::vector<Tensor>& inputs, BackwardFn backward,
            const std::vector<Tensor>& saved) {
  auto node = std::make_shared<Node>();
  node->name = name;
  node->sequence_nr = g_next_sequence_nr.fetch_add(1, std::memory_order_relaxed);
  node->next_edges.resize(inputs.size());
  node->needs.resize(inputs.size(), false);
  node->input_shapes.reserve(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& in = inputs[i];
    node->input_shapes.push_back(in.defined() ? in.shape() : Shape{});
    if (!in.requires_grad()) continue;
    AutogradMeta* m = meta_if(in);
    if (m->grad_fn) {
      node->next_edges[i].fn = m->grad_fn;
    } else {
      node->next_edges[i].leaf = in.impl_ptr();
    }
    node->needs[i] = true;
  }
  node->backward = std::move(backward);
  node->saved.reserve(saved.size());
  for (const Tensor& t : saved) {
    if (t.defined()) node->saved.emplace_back(t);
  }
  AutogradMeta& out = meta_of(output);
  out.stop_gradient = false;
  out.grad_fn = std::move(node);
}

}  // namespace crew::autograd
