#include "crew/tensor/kernels/dnnl_layout.h"

#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include "crew/core/check.h"

namespace crew::kernels::detail {

DnnlLayout::DnnlLayout(const dnnl::memory::desc& blocked)
    : blocked_(blocked),
      plain_(plain_desc(blocked.dims(), blocked.data_type())),
      reorder_(dnnl::reorder::primitive_desc(cpu_engine(), blocked_, cpu_engine(), plain_)),
      from_plain_(dnnl::reorder::primitive_desc(cpu_engine(), plain_, cpu_engine(), blocked_)) {
  CREW_INTERNAL_ASSERT(blocked_ != plain_);
}

void DnnlLayout::to_plain(const void* src, void* dst) const {
  dnnl::memory from(blocked_, cpu_engine(), const_cast<void*>(src));
  dnnl::memory to(plain_, cpu_engine(), dst);
  reorder_.execute(cpu_stream(), from, to);
}

Tensor DnnlLayout::from_plain(const Tensor& t) const {
  Tensor out = Tensor::with_layout(t.shape(), t.dtype(), dnnl_layout(blocked_));
  dnnl::memory from = as_memory(t, plain_);
  dnnl::memory to(blocked_, cpu_engine(), out.layout_data());
  from_plain_.execute(cpu_stream(), from, to);
  return out;
}

std::string DnnlLayout::name() const {
  Shape dims(blocked_.dims().begin(), blocked_.dims().end());
  return str_cat("oneDNN blocked layout of ", shape_str(dims));
}

std::shared_ptr<const DnnlLayout> dnnl_layout(const dnnl::memory::desc& blocked) {
  // A network has a handful of activation layouts: a list searched with desc equality.
  static std::mutex mu;
  static std::vector<std::shared_ptr<const DnnlLayout>> known;
  std::lock_guard<std::mutex> lock(mu);
  for (const auto& l : known) {
    if (l->desc() == blocked) return l;
  }
  known.push_back(std::make_shared<DnnlLayout>(blocked));
  return known.back();
}

const DnnlLayout* dnnl_layout_of(const Tensor& t) { return dynamic_cast<const DnnlLayout*>(t.layout()); }

const DnnlLayout* shared_float_layout(const Tensor& a, const Tensor& b) {
  const DnnlLayout* l = dnnl_layout_of(a);
  if (l == nullptr || l != dnnl_layout_of(b) || a.dtype() != DType::FLOAT32 || a.shape() != b.shape())
    return nullptr;
  return l->desc().dims() == to_dims(a.shape()) ? l : nullptr;
}

Tensor in_layout(const Tensor& t, const DnnlLayout& layout) {
  if (dnnl_layout_of(t) == &layout) return t;
  CREW_INTERNAL_ASSERT(to_dims(t.shape()) == layout.desc().dims());
  return layout.from_plain(t);
}

dnnl::memory memory_in(const dnnl::memory::desc& md, const Tensor& t, const DnnlLayout* layout) {
  if (layout != nullptr) return dnnl::memory(md, cpu_engine(), t.layout_data());
  return as_memory(t, md);
}

Tensor new_in(const Tensor& like, const DnnlLayout* layout) {
  if (layout == nullptr) return Tensor::uninitialized(like.shape(), like.dtype());
  return Tensor::with_layout(like.shape(), like.dtype(), dnnl_layout(layout->desc()));
}

bool reorders(const LayoutBridge& bridge, const Tensor& t) {
  if (!bridge.needed) return false;
  const DnnlLayout* l = dnnl_layout_of(t);
  return l == nullptr || l->desc() != bridge.wanted;
}

namespace {

// Reorders between two blocked layouts, built once per pair (a network has a few dozen).
dnnl::reorder& blocked_reorder(const dnnl::memory::desc& from, const dnnl::memory::desc& to) {
  struct Entry {
    dnnl::memory::desc from, to;
    dnnl::reorder prim;
  };
  static std::mutex mu;
  static std::vector<std::unique_ptr<Entry>> known;
  std::lock_guard<std::mutex> lock(mu);
  for (const auto& e : known) {
    if (e->from == from && e->to == to) return e->prim;
  }
  auto pd = dnnl::reorder::primitive_desc(cpu_engine(), from, cpu_engine(), to);
  known.push_back(std::make_unique<Entry>(Entry{from, to, dnnl::reorder(pd)}));
  return known.back()->prim;
}

}  // namespace

bool padding_free(const DnnlLayout& layout) { return layout.bytes() == layout.plain_bytes(); }

bool adopt_layout(const Tensor& t, const dnnl::memory::desc& wanted) {
  if (!t.defined()) return false;
  const DnnlLayout* current = dnnl_layout_of(t);
  if (current != nullptr) return current->desc() == wanted;
  const dnnl::memory::desc plain = plain_desc(wanted.dims(), wanted.data_type());
  if (wanted == plain || wanted.get_size() != plain.get_size()) return false;  // row-major, or padded
  TensorImpl* impl = t.impl();
  const std::shared_ptr<Storage>& s = impl->storage;
  const bool whole = impl->offset == 0 && s.use_count() == 1 && s->bytes() == plain.get_size();
  if (to_dims(t.shape()) != wanted.dims() || t.dtype() != crew_dtype(wanted.data_type()) || !whole ||
      !s->owns_memory() || s->place().type != DeviceType::CPU || s->saved_for_backward() != 0) {
    return false;
  }
  auto layout = dnnl_layout(wanted);
  // Reordered through a temporary and copied back: the storage keeps its memory (no second
  // resident copy of every parameter left behind in the heap), its version and its users.
  const Tensor blocked = layout->from_plain(t);
  std::memcpy(s->data(), blocked.layout_data(), layout->bytes());
  s->set_layout(layout);
  return true;
}

dnnl::memory input_memory(const LayoutBridge& bridge, const Tensor& t) {
  if (bridge.needed && !reorders(bridge, t))
    return dnnl::memory(bridge.wanted, cpu_engine(), t.layout_data());
  const DnnlLayout* layout = dnnl_layout_of(t);
  if (bridge.needed && layout != nullptr) {
    dnnl::memory from(layout->desc(), cpu_engine(), t.layout_data());
    dnnl::memory to(bridge.wanted, cpu_engine());
    blocked_reorder(layout->desc(), bridge.wanted).execute(cpu_stream(), from, to);
    return to;
  }
  if (!bridge.needed && layout != nullptr) {
    // A row-major reader of a blocked tensor (a gemm-based weight gradient at small spatial
    // sizes) gets a row-major copy: converting t in place would make its other readers (the
    // data gradient, which wants it blocked) reorder it back.
    dnnl::memory plain(bridge.plain, cpu_engine());
    layout->to_plain(t.layout_data(), plain.get_data_handle());
    return plain;
  }
  return bridge_input(bridge, t);
}

Tensor output_tensor(const LayoutBridge& bridge, const Shape& shape) {
  const DType dtype = crew_dtype(bridge.wanted.data_type());
  if (!bridge.needed) return Tensor::uninitialized(shape, dtype);
  return Tensor::with_layout(shape, dtype, dnnl_layout(bridge.wanted));
}

dnnl::memory output_memory(const LayoutBridge& bridge, const Tensor& out) {
  if (!bridge.needed) return as_memory(out, bridge.plain);
  CREW_INTERNAL_ASSERT(!reorders(bridge, out));
  return dnnl::memory(bridge.wanted, cpu_engine(), out.layout_data());
}

}  // namespace crew::kernels::detail
