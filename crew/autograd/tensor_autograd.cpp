// The autograd members of crew::Tensor (declared in crew/tensor/tensor.h).
#include <atomic>

#include "crew/autograd/autograd_meta.h"
#include "crew/autograd/engine.h"
#include "crew/autograd/function.h"

namespace crew {

using autograd::meta_if;
using autograd::meta_of;

bool Tensor::stop_gradient() const {
  const autograd::AutogradMeta* m = meta_if(*this);
  return m == nullptr || m->stop_gradient;
}

Tensor& Tensor::set_stop_gradient(bool stop) {
  check_defined("set_stop_gradient");
  meta_of(*this).stop_gradient = stop;
  return *this;
}

Tensor Tensor::grad() const {
  autograd::AutogradMeta* m = meta_if(*this);
  if (m == nullptr) return Tensor();
  if (m->grad_zero_pending) {
    m->grad_zero_pending = false;
    m->grad.zero_();
  }
  return m->grad;
}

void Tensor::set_grad(const Tensor& grad) {
  check_defined("set_grad");
  if (grad.defined()) {
    CREW_CHECK(grad.shape() == shape() && grad.dtype() == dtype(), "set_grad: gradient ", shape_str(grad.shape()),
               " ", dtype_name(grad.dtype()), " does not match tensor ", shape_str(shape()), " ",
               dtype_name(dtype()));
  }
  autograd::AutogradMeta& m = meta_of(*this);
  m.grad = grad;
  m.grad_zero_pending = false;
}

void Tensor::clear_grad(bool set_to_zero) {
  autograd::AutogradMeta* m = meta_if(*this);
  if (m == nullptr) return;
  if (set_to_zero && m->grad.defined()) {
    // Held by nobody else (not a DataParallel bucket's slot, not a Python reference): the
    // zeros are written only if someone reads them before backward replaces them. Paddle's
    // default clear_grad() otherwise costs a fill and an addition per parameter per step.
    if (autograd::disposable_grad(m->grad)) {
      m->grad_zero_pending = true;
    } else {
      m->grad.zero_();
    }
  } else if (set_to_zero) {
    m->grad = Tensor::zeros(shape(), dtype(), place());
  } else {
    m->grad = Tensor();
    m->grad_zero_pending = false;
  }
}

void Tensor::backward(bool retain_graph) const {
  check_defined("backward");
  CREW_CHECK(numel() == 1, "backward: a tensor of shape ", shape_str(shape()),
             " is not a scalar; pass the gradient explicitly");
  backward(Tensor::ones(shape(), dtype(), place()), retain_graph);
}

void Tensor::backward(const Tensor& grad_output, bool retain_graph) const {
  check_defined("backward");
  autograd::run_backward(*this, grad_output, retain_graph);
}

Tensor Tensor::detach() const {
  check_defined("detach");
  return view(shape());  // a fresh handle over the same storage, without autograd state
}

bool Tensor::is_leaf() const {
  const autograd::AutogradMeta* m = meta_if(*this);
  return m == nullptr || m->grad_fn == nullptr;
}

namespace autograd {
namespace {
std::atomic<HookId> g_next_hook_id{1};
}

HookId register_grad_ready_hook(const Tensor& leaf, std::function<void(const Tensor& leaf)> fn) {
  CREW_CHECK(leaf.defined(), "register_grad_ready_hook: tensor is undefined");
  CREW_CHECK(leaf.is_leaf() && leaf.requires_grad(), "register_grad_ready_hook: tensor of shape ",
             shape_str(leaf.shape()), " must be a leaf with stop_gradient=false");
  CREW_CHECK(fn != nullptr, "register_grad_ready_hook: empty hook function");
  const HookId id = g_next_hook_id.fetch_add(1);
  meta_of(leaf).hooks.push_back({id, std::move(fn)});
  return id;
}

void remove_grad_ready_hook(const Tensor& leaf, HookId id) {
  AutogradMeta* m = meta_if(leaf);
  if (m == nullptr) return;
  std::erase_if(m->hooks, [id](const GradReadyHook& h) { return h.id == id; });
}

HookId register_grad_hook(const Tensor& t, GradHook fn) {
  CREW_CHECK(t.defined(), "register_hook: tensor is undefined");
  CREW_CHECK(t.requires_grad(), "register_hook: tensor of shape ", shape_str(t.shape()),
             " has stop_gradient=true, so no gradient reaches a hook");
  CREW_CHECK(fn != nullptr, "register_hook: empty hook function");
  const HookId id = g_next_hook_id.fetch_add(1);
  AutogradMeta& m = meta_of(t);
  (m.grad_fn ? m.grad_fn->grad_hooks : m.grad_hooks).push_back({id, std::move(fn)});
  return id;
}

void remove_grad_hook(const Tensor& t, HookId id) {
  AutogradMeta* m = meta_if(t);
  if (m == nullptr) return;
  std::erase_if(m->grad_fn ? m->grad_fn->grad_hooks : m->grad_hooks,
                [id](const GradHookEntry& h) { return h.id == id; });
}

}  // namespace autograd
}  // namespace crew
