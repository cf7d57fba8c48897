#include "crew/tensor/kernels/lrn.h"

#include "crew/core/check.h"
#include "crew/tensor/kernels/dnnl_context.h"

namespace crew::kernels {
namespace {

struct Entry {
  dnnl::memory::desc md, ws;
  dnnl::lrn_forward fwd;
  dnnl::lrn_backward bwd;
};

std::shared_ptr<Entry> entry(const Shape& shape, const LrnParams& p) {
  static detail::PrimitiveCache<Entry> cache;
  return cache.get(str_cat(shape_str(shape), ':', p.size, ':', p.alpha, ':', p.beta, ':', p.k), [&] {
    auto e = std::make_shared<Entry>();
    e->md = detail::plain_desc(detail::to_dims(shape));
    const auto a = static_cast<float>(p.alpha), b = static_cast<float>(p.beta), k = static_cast<float>(p.k);
    dnnl::lrn_forward::primitive_desc fpd(
        dnnl::lrn_forward::desc(dnnl::prop_kind::forward_training, dnnl::algorithm::lrn_across_channels,
                                e->md, p.size, a, b, k),
        detail::cpu_engine());
    e->ws = fpd.workspace_desc();
    e->fwd = dnnl::lrn_forward(fpd);
    e->bwd = dnnl::lrn_backward(dnnl::lrn_backward::primitive_desc(
        dnnl::lrn_backward::desc(dnnl::algorithm::lrn_across_channels, e->md, e->md, p.size, a, b, k),
        detail::cpu_engine(), fpd));
    return e;
  });
}

void check(const Tensor& x, const LrnParams& p, const char* op) {
  CREW_CHECK(x.dtype() == DType::FLOAT32, op, ": float32 only, got ", dtype_name(x.dtype()));
  CREW_CHECK(x.dim() == 4, op, ": expected [N, C, H, W], got shape ", shape_str(x.shape()));
  CREW_CHECK(p.size >= 1 && p.size % 2 == 1, op, ": size must be odd and positive, got ", p.size);
}

LrnForwardResult lrn_forward_cpu(const Tensor& x, const LrnParams& p) {
  check(x, p, "local_response_norm");
  LrnForwardResult r{Tensor::uninitialized(x.shape(), x.dtype()), Tensor()};
  if (x.numel() == 0) return r;
  try {
    auto e = entry(x.shape(), p);
    std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_SRC, detail::as_memory(x, e->md)},
                                               {DNNL_ARG_DST, detail::as_memory(r.y, e->md)}};
    if (e->ws.get_size() > 0) {
      r.workspace = Tensor::uninitialized({static_cast<int64_t>(e->ws.get_size())}, DType::UINT8);
      args.emplace(DNNL_ARG_WORKSPACE, dnnl::memory(e->ws, detail::cpu_engine(), r.workspace.raw_data()));
    }
    e->fwd.execute(detail::cpu_stream(), args);
    return r;
  } catch (const dnnl::error& err) {
    detail::rethrow_dnnl("local_response_norm", err);
  }
}

Tensor lrn_backward_cpu(const Tensor& grad_y, const Tensor& x, const Tensor& workspace, const LrnParams& p) {
  check(grad_y, p, "local_response_norm backward");
  CREW_CHECK(grad_y.shape() == x.shape(), "local_response_norm backward: grad ", shape_str(grad_y.shape()),
             " does not match input ", shape_str(x.shape()));
  Tensor gx = Tensor::uninitialized(x.shape(), x.dtype());
  if (x.numel() == 0) return gx;
  try {
    auto e = entry(x.shape(), p);
    std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_SRC, detail::as_memory(x, e->md)},
                                               {DNNL_ARG_DIFF_DST, detail::as_memory(grad_y, e->md)},
                                               {DNNL_ARG_DIFF_SRC, detail::as_memory(gx, e->md)}};
    if (e->ws.get_size() > 0) {
      CREW_CHECK(workspace.defined() && workspace.numel() == static_cast<int64_t>(e->ws.get_size()),
                 "local_response_norm backward: the forward's workspace is missing");
      args.emplace(DNNL_ARG_WORKSPACE, dnnl::memory(e->ws, detail::cpu_engine(), workspace.raw_data()));
    }
    e->bwd.execute(detail::cpu_stream(), args);
    return gx;
  } catch (const dnnl::error& err) {
    detail::rethrow_dnnl("local_response_norm backward", err);
  }
}

}  // namespace

constinit KernelSlot<LrnForwardFn> lrn_forward_kernel("lrn_forward", &lrn_forward_cpu);
constinit KernelSlot<LrnBackwardFn> lrn_backward_kernel("lrn_backward", &lrn_backward_cpu);

LrnForwardResult lrn_forward(const Tensor& x, const LrnParams& p) {
  return lrn_forward_kernel.get(x.place().type)(x, p);
}

Tensor lrn_backward(const Tensor& grad_y, const Tensor& x, const Tensor& workspace, const LrnParams& p) {
  check_same_place("local_response_norm backward", {{"grad_y", &grad_y}, {"x", &x}});
  return lrn_backward_kernel.get(grad_y.place().type)(grad_y, x, workspace, p);
}

}  // namespace crew::kernels
