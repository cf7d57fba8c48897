#include "crew/tensor/kernels/pool.h"

#include "crew/core/check.h"
#include "crew/core/env.h"
#include "crew/tensor/kernels/dnnl_context.h"
#include "crew/tensor/kernels/dnnl_layout.h"
#include "crew/tensor/kernels/low_precision.h"
#include "crew/tensor/kernels/pool_direct.h"

namespace crew::kernels {
namespace {

using dnnl::memory;

struct PoolGeometry {
  memory::dims src, dst, kernel, strides, pad_l, pad_r;
  memory::data_type dt = memory::data_type::f32;  // of src and dst (bf16: oneDNN's bf16 kernels)
  std::string key;
};

PoolGeometry geometry(PoolKind kind, const Shape& x, const Pool2dParams& p, DType dtype) {
  const Shape y = pool2d_output_shape(x, p);
  PoolGeometry g;
  g.dt = detail::dnnl_type(dtype);
  g.src = detail::to_dims(x);
  g.dst = detail::to_dims(y);
  g.kernel = {p.kernel[0], p.kernel[1]};
  g.strides = {p.stride[0], p.stride[1]};
  g.pad_l = {p.padding[0], p.padding[1]};
  for (int i = 0; i < 2; ++i) {
    int64_t r = (y[2 + i] - 1) * p.stride[i] + p.kernel[i] - x[2 + i] - p.padding[i];
    g.pad_r.push_back(r < 0 ? 0 : r);
  }
  g.key = str_cat(kind == PoolKind::MAX ? "max" : "avg", dtype_name(dtype), shape_str(x), p.kernel[0], ',',
                  p.kernel[1], ',', p.stride[0], ',', p.stride[1], ',', p.padding[0], ',', p.padding[1]);
  return g;
}

dnnl::algorithm algorithm_of(PoolKind kind) {
  return kind == PoolKind::MAX ? dnnl::algorithm::pooling_max : dnnl::algorithm::pooling_avg_exclude_padding;
}

// oneDNN's fast (jit) pooling wants channel-blocked data; its plain-NCHW pooling is a slow
// reference loop. With C a multiple of 8 we therefore reorder into nChw8c and back, which
// costs far less than the plain kernel saves.
memory::desc wanted_desc(const memory::dims& dims, memory::data_type dt) {
  if (dims[1] % 8 == 0) return memory::desc(dims, dt, memory::format_tag::nChw8c);
  return detail::plain_desc(dims, dt);
}

struct ForwardEntry {
  dnnl::pooling_forward::primitive_desc pd;
  dnnl::pooling_forward prim;
  detail::LayoutBridge src, dst;
};

struct BackwardEntry {
  dnnl::pooling_backward prim;
  detail::LayoutBridge diff_dst, diff_src;
  memory::desc workspace;
};

// `layout`: the blocked layout x is in (the output takes the one oneDNN picks for it), or
// null for a row-major x (reordered to wanted_desc).
std::shared_ptr<ForwardEntry> forward_entry(PoolKind kind, const PoolGeometry& g, bool training,
                                            const detail::DnnlLayout* layout) {
  static detail::PrimitiveCache<ForwardEntry> cache;
  return cache.get(str_cat(training, g.key, static_cast<const void*>(layout)), [&] {
    auto e = std::make_shared<ForwardEntry>();
    const memory::desc src = layout ? layout->desc() : wanted_desc(g.src, g.dt);
    const memory::desc dst =
        layout ? memory::desc(g.dst, g.dt, memory::format_tag::any) : wanted_desc(g.dst, g.dt);
    dnnl::pooling_forward::desc d(
        training ? dnnl::prop_kind::forward_training : dnnl::prop_kind::forward_inference, algorithm_of(kind),
        src, dst, g.strides, g.kernel, g.pad_l, g.pad_r);
    e->pd = dnnl::pooling_forward::primitive_desc(d, detail::cpu_engine());
    e->prim = dnnl::pooling_forward(e->pd);
    e->src = detail::LayoutBridge(detail::plain_desc(g.src, g.dt), e->pd.src_desc());
    e->dst = detail::LayoutBridge(detail::plain_desc(g.dst, g.dt), e->pd.dst_desc());
    return e;
  });
}

std::shared_ptr<BackwardEntry> backward_entry(PoolKind kind, const PoolGeometry& g,
                                              const detail::DnnlLayout* layout) {
  static detail::PrimitiveCache<BackwardEntry> cache;
  auto fwd = forward_entry(kind, g, true, layout);
  return cache.get(str_cat(g.key, static_cast<const void*>(layout)), [&] {
    auto b = std::make_shared<BackwardEntry>();
    dnnl::pooling_backward::desc d(algorithm_of(kind), fwd->pd.src_desc(), fwd->pd.dst_desc(), g.strides,
                                   g.kernel, g.pad_l, g.pad_r);
    dnnl::pooling_backward::primitive_desc pd(d, detail::cpu_engine(), fwd->pd);
    b->prim = dnnl::pooling_backward(pd);
    b->diff_dst = detail::LayoutBridge(detail::plain_desc(g.dst, g.dt), pd.diff_dst_desc());
    b->diff_src = detail::LayoutBridge(detail::plain_desc(g.src, g.dt), pd.diff_src_desc());
    b->workspace = fwd->pd.workspace_desc();
    return b;
  });
}

}  // namespace

PoolImpl default_pool_impl() {
  static const PoolImpl impl = [] {
    const std::string name = env::get_string("CREW_POOL_IMPL", "direct");
    CREW_CHECK(name == "direct" || name == "onednn", "CREW_POOL_IMPL must be direct or onednn, got ", name);
    return name == "onednn" ? PoolImpl::ONEDNN : PoolImpl::DIRECT;
  }();
  return impl;
}

Shape pool2d_output_shape(const Shape& x, const Pool2dParams& p) {
  CREW_CHECK(x.size() == 4, "pool2d: input must be 4-d NCHW, got shape ", shape_str(x));
  Shape y{x[0], x[1], 0, 0};
  for (int i = 0; i < 2; ++i) {
    CREW_CHECK(p.kernel[i] >= 1, "pool2d: kernel must be >= 1, got ", p.kernel[i]);
    CREW_CHECK(p.stride[i] >= 1, "pool2d: stride must be >= 1, got ", p.stride[i]);
    CREW_CHECK(p.padding[i] >= 0 && 2 * p.padding[i] <= p.kernel[i], "pool2d: padding ", p.padding[i],
               " must be in [0, kernel/2] for kernel ", p.kernel[i]);
    const int64_t padded = x[2 + i] + 2 * p.padding[i];
    CREW_CHECK(padded >= p.kernel[i], "pool2d: kernel ", p.kernel[i], " exceeds padded input extent ", padded,
               " (input ", shape_str(x), ")");
    y[2 + i] = (padded - p.kernel[i]) / p.stride[i] + 1;
  }
  return y;
}

namespace {

std::tuple<Tensor, Tensor, std::shared_ptr<const OpaqueLayout>> pool2d_forward_cpu(
    PoolKind kind, const Tensor& x, const Pool2dParams& p, bool with_workspace, PoolImpl impl) {
  CREW_CHECK_T(DTypeError, x.dtype() == DType::FLOAT32 || is_low_precision(x.dtype()),
               "pool2d: input must be float32, bfloat16 or float16, got ", dtype_name(x.dtype()));
  if (is_low_precision(x.dtype())) {
    // 16 bits: oneDNN's kernels where it has them (the direct kernel is float32's); else
    // through float32, rounding the result (the max is exact either way).
    if (!dnnl_supports(x.dtype(), "pool2d")) {
      auto [y, workspace, layout] = pool2d_forward_cpu(kind, to_float32(x), p, with_workspace, impl);
      return {y.to(x.dtype()), workspace, layout};
    }
    impl = PoolImpl::ONEDNN;
  }
  PoolForwardResult r;
  const Shape y_shape = pool2d_output_shape(x.shape(), p);
  // A blocked x (a conv's or relu's output) is pooled by oneDNN as it is, into a blocked y.
  const detail::DnnlLayout* layout = detail::dnnl_layout_of(x);
  if (impl == PoolImpl::DIRECT && layout == nullptr) {
    r.y = Tensor::uninitialized(y_shape);
    // The argmax is needed to pick the max at all, so it is kept whether or not asked for.
    if (kind == PoolKind::MAX) r.workspace = Tensor::uninitialized(r.y.shape(), DType::INT32);
    detail::pool2d_direct_forward(kind, x, p, r.y, r.workspace);
    return {r.y, r.workspace, r.x_layout};
  }
  const PoolGeometry g = geometry(kind, x.shape(), p, x.dtype());
  try {
    auto e = forward_entry(kind, g, with_workspace, layout);
    if (layout != nullptr) r.x_layout = detail::dnnl_layout(layout->desc());
    r.y = detail::output_tensor(e->dst, y_shape);
    std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_SRC, detail::input_memory(e->src, x)},
                                               {DNNL_ARG_DST, detail::output_memory(e->dst, r.y)}};
    const memory::desc ws = e->pd.workspace_desc();
    if (with_workspace && ws.get_size() > 0) {
      r.workspace = Tensor::uninitialized({static_cast<int64_t>(ws.get_size())}, DType::UINT8);
      args.emplace(DNNL_ARG_WORKSPACE, dnnl::memory(ws, detail::cpu_engine(), r.workspace.raw_data()));
    }
    e->prim.execute(detail::cpu_stream(), args);
  } catch (const dnnl::error& err) {
    detail::rethrow_dnnl("pool2d forward", err);
  }
  return {r.y, r.workspace, r.x_layout};
}

Tensor pool2d_backward_cpu(PoolKind kind, const Tensor& grad_y, const Shape& x_shape, const Tensor& workspace,
                           const Pool2dParams& p, PoolImpl impl,
                           const std::shared_ptr<const OpaqueLayout>& x_layout) {
  CREW_CHECK(grad_y.shape() == pool2d_output_shape(x_shape, p), "pool2d backward: grad_output ",
             shape_str(grad_y.shape()), " does not match the output");
  CREW_CHECK_T(DTypeError, grad_y.dtype() == DType::FLOAT32 || is_low_precision(grad_y.dtype()),
               "pool2d backward: grad_output must be float32, bfloat16 or float16, got ",
               dtype_name(grad_y.dtype()));
  if (is_low_precision(grad_y.dtype()) && !dnnl_supports(grad_y.dtype(), "pool2d")) {
    // As the forward: through float32 (its workspace and layout are float32's).
    return pool2d_backward_cpu(kind, to_float32(grad_y), x_shape, workspace, p, impl, x_layout)
        .to(grad_y.dtype());
  }
  const auto* layout = dynamic_cast<const detail::DnnlLayout*>(x_layout.get());
  if (kind == PoolKind::MAX) {
    CREW_CHECK(workspace.defined(), "pool2d backward: max pooling needs the forward workspace");
    impl = workspace.dtype() == DType::INT32 ? PoolImpl::DIRECT : PoolImpl::ONEDNN;
  }
  if (layout != nullptr || is_low_precision(grad_y.dtype())) impl = PoolImpl::ONEDNN;
  if (impl == PoolImpl::DIRECT) {
    CREW_CHECK(kind == PoolKind::AVG || workspace.shape() == grad_y.shape(), "pool2d backward: workspace ",
               shape_str(workspace.shape()), " does not match the output");
    // The direct kernel zeroes each plane just before it scatters into it (while in cache).
    Tensor grad_x = Tensor::uninitialized(x_shape);
    detail::pool2d_direct_backward(kind, grad_y, workspace, p, grad_x);
    return grad_x;
  }
  const PoolGeometry g = geometry(kind, x_shape, p, grad_y.dtype());
  Tensor grad_x;
  try {
    auto e = backward_entry(kind, g, layout);
    grad_x = detail::output_tensor(e->diff_src, x_shape);  // oneDNN writes every element
    std::unordered_map<int, dnnl::memory> args{
        {DNNL_ARG_DIFF_DST, detail::input_memory(e->diff_dst, grad_y)},
        {DNNL_ARG_DIFF_SRC, detail::output_memory(e->diff_src, grad_x)}};
    if (e->workspace.get_size() > 0) {
      CREW_CHECK(workspace.defined() && workspace.nbytes() >= e->workspace.get_size(),
                 "pool2d backward: max pooling needs the forward workspace");
      args.emplace(DNNL_ARG_WORKSPACE,
                   dnnl::memory(e->workspace, detail::cpu_engine(), workspace.raw_data()));
    }
    e->prim.execute(detail::cpu_stream(), args);
  } catch (const dnnl::error& err) {
    detail::rethrow_dnnl("pool2d backward", err);
  }
  return grad_x;
}

}  // namespace

constinit KernelSlot<Pool2dForwardFn> pool2d_forward_kernel("pool2d_forward", &pool2d_forward_cpu);
constinit KernelSlot<Pool2dBackwardFn> pool2d_backward_kernel("pool2d_backward", &pool2d_backward_cpu);

PoolForwardResult pool2d_forward(PoolKind kind, const Tensor& x, const Pool2dParams& p, bool with_workspace,
                                 PoolImpl impl) {
  PoolForwardResult r;
  std::tie(r.y, r.workspace, r.x_layout) =
      pool2d_forward_kernel.get(x.place().type)(kind, x, p, with_workspace, impl);
  return r;
}

Tensor pool2d_backward(PoolKind kind, const Tensor& grad_y, const Shape& x_shape, const Tensor& workspace,
                       const Pool2dParams& p, PoolImpl impl,
                       const std::shared_ptr<const OpaqueLayout>& x_layout) {
  check_same_place("pool2d backward", {{"grad_y", &grad_y}, {"workspace", &workspace}});
  return pool2d_backward_kernel.get(grad_y.place().type)(kind, grad_y, x_shape, workspace, p, impl, x_layout);
}

}  // namespace crew::kernels
