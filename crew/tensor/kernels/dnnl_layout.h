#pragma once
// oneDNN's blocked memory layouts as crew OpaqueLayouts (crew/tensor/layout.h): a kernel
// writes its output in the layout its primitive picked, and reads an input that is in the
// layout it wants as it is, so conv -> relu -> max_pool -> conv runs without reorders. Any
// other reader converts the tensor to row-major when it asks for its data.
//
//   dnnl::memory src = input_memory(e->src, x);              // x's bytes, or x reordered
//   Tensor y = output_tensor(e->dst, y_shape);               // row-major or blocked
//   prim.execute(stream, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, output_memory(e->dst, y)}});
#include <memory>
#include <string>

#include "crew/tensor/kernels/dnnl_context.h"
#include "crew/tensor/layout.h"

namespace crew::kernels::detail {

class DnnlLayout final : public OpaqueLayout {
 public:
  explicit DnnlLayout(const dnnl::memory::desc& blocked);
  size_t bytes() const override { return blocked_.get_size(); }
  size_t plain_bytes() const override { return plain_.get_size(); }
  void to_plain(const void* src, void* dst) const override;
  // A new tensor in this layout holding the values of row-major t (of this layout's dims).
  Tensor from_plain(const Tensor& t) const;
  std::string name() const override;
  const dnnl::memory::desc& desc() const { return blocked_; }

 private:
  dnnl::memory::desc blocked_;
  dnnl::memory::desc plain_;
  dnnl::reorder reorder_;
  dnnl::reorder from_plain_;
};

// The one shared DnnlLayout of `blocked` (a desc that is not row-major).
std::shared_ptr<const DnnlLayout> dnnl_layout(const dnnl::memory::desc& blocked);
// The DnnlLayout t's data is in, or null (row-major, or another kind of layout).
const DnnlLayout* dnnl_layout_of(const Tensor& t);

// The float32 blocked layout a and b both have, with dims of their (equal) shape, or null:
// then an elementwise op may run over their layout bytes as they are.
const DnnlLayout* shared_float_layout(const Tensor& a, const Tensor& b);

// t in `layout`: t itself when it is in it, else a reordered copy (t is left as it is). For a
// backward kernel whose saved input is blocked and whose incoming gradient is row-major: one
// reorder of the gradient instead of converting the saved input (in place, for every tensor
// sharing it) and running the kernel on row-major data, whose result the next conv reorders.
Tensor in_layout(const Tensor& t, const DnnlLayout& layout);

// For primitives that take any layout as it is (batch norm, eltwise): the memory of t, whose
// desc is md: t's bytes as they are when `layout` (md's blocked layout) is set, else t
// row-major (converted if it was blocked).
dnnl::memory memory_in(const dnnl::memory::desc& md, const Tensor& t, const DnnlLayout* layout);
// A new tensor shaped like `like` in `layout`, or row-major when it is null.
Tensor new_in(const Tensor& like, const DnnlLayout* layout);

// Converts t's storage in place into the padding-free blocked layout `wanted` (its dims and
// dtype t's), for a parameter that a kernel reads in that layout every step: the weights of a
// convolution (conv.cpp) and the optimizer state beside them (optimizer_update.cpp). Only
// when t is its storage's one whole tensor, owned host memory, row-major, and not saved for a
// live backward; returns whether t is in `wanted` now. Elementwise math over such bytes is
// the row-major math permuted; every row-major reader still gets row-major data (converted
// back in place), and the next kernel that wants the layout adopts it again. Like any in-place
// op on a tensor, not for a tensor another thread reads meanwhile (a forward pass's weights).
bool adopt_layout(const Tensor& t, const dnnl::memory::desc& wanted);
// Whether `layout` holds exactly the row-major bytes' count (no padding).
bool padding_free(const DnnlLayout& layout);

// The memory a primitive reads in bridge.wanted: t's own bytes when t is in that layout, t's
// blocked bytes reordered straight into it when t is in another blocked layout (t itself is
// left as it is), else t (row-major) reordered by the bridge.
dnnl::memory input_memory(const LayoutBridge& bridge, const Tensor& t);
// Whether input_memory(bridge, t) reorders.
bool reorders(const LayoutBridge& bridge, const Tensor& t);
// A new tensor of `shape` for a primitive to write in bridge.wanted: row-major when that is
// the plain layout, else in that blocked layout.
Tensor output_tensor(const LayoutBridge& bridge, const Shape& shape);
// The memory over a tensor of output_tensor(bridge, ...).
dnnl::memory output_memory(const LayoutBridge& bridge, const Tensor& out);

}  // namespace crew::kernels::detail
