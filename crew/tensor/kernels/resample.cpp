#include "crew/tensor/kernels/resample.h"

#include "crew/core/check.h"
#include "crew/tensor/kernels/dnnl_context.h"

namespace crew::kernels {
namespace {

struct Entry {
  dnnl::memory::desc src, dst;
  dnnl::resampling_forward fwd;
  dnnl::resampling_backward bwd;
};

std::shared_ptr<Entry> entry(ResampleMode mode, const Shape& x, const Shape& y) {
  static detail::PrimitiveCache<Entry> cache;
  return cache.get(str_cat(static_cast<int>(mode), ':', shape_str(x), ':', shape_str(y)), [&] {
    auto e = std::make_shared<Entry>();
    e->src = detail::plain_desc(detail::to_dims(x));
    e->dst = detail::plain_desc(detail::to_dims(y));
    const auto alg = mode == ResampleMode::NEAREST ? dnnl::algorithm::resampling_nearest
                                                   : dnnl::algorithm::resampling_linear;
    dnnl::resampling_forward::primitive_desc fpd(
        dnnl::resampling_forward::desc(dnnl::prop_kind::forward_training, alg, e->src, e->dst),
        detail::cpu_engine());
    e->fwd = dnnl::resampling_forward(fpd);
    e->bwd = dnnl::resampling_backward(dnnl::resampling_backward::primitive_desc(
        dnnl::resampling_backward::desc(alg, e->src, e->dst), detail::cpu_engine(), fpd));
    return e;
  });
}

void check_input(const Tensor& t, const char* op) {
  CREW_CHECK(t.dtype() == DType::FLOAT32, op, ": float32 only, got ", dtype_name(t.dtype()));
  CREW_CHECK(t.dim() == 4, op, ": expected NCHW, got shape ", shape_str(t.shape()));
}

Tensor resample2d_forward_cpu(ResampleMode mode, const Tensor& x, std::array<int64_t, 2> out) {
  check_input(x, "resample2d");
  CREW_CHECK(out[0] >= 1 && out[1] >= 1, "resample2d: output size ", out[0], "x", out[1],
             " must be positive");
  const Shape y_shape{x.size(0), x.size(1), out[0], out[1]};
  Tensor y = Tensor::uninitialized(y_shape, x.dtype());
  if (x.numel() == 0) return y;
  try {
    auto e = entry(mode, x.shape(), y_shape);
    e->fwd.execute(detail::cpu_stream(), {{DNNL_ARG_SRC, detail::as_memory(x, e->src)},
                                          {DNNL_ARG_DST, detail::as_memory(y, e->dst)}});
    return y;
  } catch (const dnnl::error& err) {
    detail::rethrow_dnnl("resample2d", err);
  }
}

Tensor resample2d_backward_cpu(ResampleMode mode, const Tensor& grad_y, const Shape& x_shape) {
  check_input(grad_y, "resample2d backward");
  CREW_CHECK(x_shape.size() == 4 && x_shape[0] == grad_y.size(0) && x_shape[1] == grad_y.size(1),
             "resample2d backward: grad ", shape_str(grad_y.shape()), " does not match input ",
             shape_str(x_shape));
  Tensor gx = Tensor::uninitialized(x_shape, grad_y.dtype());
  if (gx.numel() == 0) return gx;
  try {
    auto e = entry(mode, x_shape, grad_y.shape());
    e->bwd.execute(detail::cpu_stream(), {{DNNL_ARG_DIFF_DST, detail::as_memory(grad_y, e->dst)},
                                          {DNNL_ARG_DIFF_SRC, detail::as_memory(gx, e->src)}});
    return gx;
  } catch (const dnnl::error& err) {
    detail::rethrow_dnnl("resample2d backward", err);
  }
}

}  // namespace

constinit KernelSlot<Resample2dForwardFn> resample2d_forward_kernel("resample2d_forward",
                                                                    &resample2d_forward_cpu);
constinit KernelSlot<Resample2dBackwardFn> resample2d_backward_kernel("resample2d_backward",
                                                                      &resample2d_backward_cpu);

Tensor resample2d_forward(ResampleMode mode, const Tensor& x, std::array<int64_t, 2> out) {
  return resample2d_forward_kernel.get(x.place().type)(mode, x, out);
}

Tensor resample2d_backward(ResampleMode mode, const Tensor& grad_y, const Shape& x_shape) {
  return resample2d_backward_kernel.get(grad_y.place().type)(mode, grad_y, x_shape);
}

}  // namespace crew::kernels
