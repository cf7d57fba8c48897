#include "crew/tensor/kernels/batch_norm.h"

#include "crew/core/check.h"
#include "crew/tensor/kernels/dnnl_context.h"
#include "crew/tensor/kernels/dnnl_layout.h"
#include "crew/tensor/kernels/low_precision.h"

namespace crew::kernels {
namespace {

struct BnEntry {
  dnnl::memory::desc data_md, stat_md;
  dnnl::batch_normalization_forward fwd;
  dnnl::batch_normalization_backward bwd;
};

// `layout`: the blocked layout the data is in, or null for row-major.
// dtype: the data's (float32 or bfloat16); statistics, scale and shift are float32 either way.
// inference: a forward with the given (running) statistics and no backward.
std::shared_ptr<BnEntry> bn_entry(const Shape& shape, DType dtype, const detail::DnnlLayout* layout,
                                  bool scale, bool shift, double epsilon, bool inference = false) {
  static detail::PrimitiveCache<BnEntry> cache;
  const std::string key = str_cat(shape_str(shape), dtype_name(dtype), static_cast<const void*>(layout), ',',
                                  scale, shift, ',', epsilon, inference ? ",inference" : "");
  return cache.get(key, [&] {
    auto e = std::make_shared<BnEntry>();
    e->data_md =
        layout ? layout->desc() : detail::plain_desc(detail::to_dims(shape), detail::dnnl_type(dtype));
    e->stat_md = detail::plain_desc({shape[1]});
    auto flags = inference ? dnnl::normalization_flags::use_global_stats : dnnl::normalization_flags::none;
    if (scale) flags |= dnnl::normalization_flags::use_scale;
    if (shift) flags |= dnnl::normalization_flags::use_shift;
    const float eps = static_cast<float>(epsilon);
    const auto fprop = inference ? dnnl::prop_kind::forward_inference : dnnl::prop_kind::forward_training;
    dnnl::batch_normalization_forward::desc fd(fprop, e->data_md, eps, flags);
    dnnl::batch_normalization_forward::primitive_desc fpd(fd, detail::cpu_engine());
    e->fwd = dnnl::batch_normalization_forward(fpd);
    if (inference) return e;
    const auto bprop = scale || shift ? dnnl::prop_kind::backward : dnnl::prop_kind::backward_data;
    dnnl::batch_normalization_backward::desc bd(bprop, e->data_md, e->data_md, eps, flags);
    e->bwd = dnnl::batch_normalization_backward(
        dnnl::batch_normalization_backward::primitive_desc(bd, detail::cpu_engine(), fpd));
    return e;
  });
}

dnnl::memory data_memory(const BnEntry& e, const Tensor& t, const detail::DnnlLayout* layout) {
  return detail::memory_in(e.data_md, t, layout);
}

}  // namespace

Tensor batch_norm_inference(const Tensor& x, const Tensor& mean, const Tensor& variance, const Tensor& weight,
                            const Tensor& bias, double epsilon) {
  CREW_CHECK(batch_norm_supported(x), "batch_norm inference (oneDNN): unsupported input ", shape_str(x.shape()),
             " ", dtype_name(x.dtype()));
  for (const Tensor* t : {&mean, &variance, &weight, &bias}) {
    CREW_CHECK_T(DTypeError, !t->defined() || t->dtype() == DType::FLOAT32,
                 "batch_norm inference (oneDNN): statistics, weight and bias must be float32, got ",
                 dtype_name(t->dtype()));
  }
  const detail::DnnlLayout* layout = detail::dnnl_layout_of(x);
  Tensor y = detail::new_in(x, layout);
  try {
    auto e = bn_entry(x.shape(), x.dtype(), layout, weight.defined(), bias.defined(), epsilon, true);
    std::unordered_map<int, dnnl::memory> args{
        {DNNL_ARG_SRC, data_memory(*e, x, layout)},
        {DNNL_ARG_DST, data_memory(*e, y, layout)},
        {DNNL_ARG_MEAN, detail::as_memory(mean, e->stat_md)},
        {DNNL_ARG_VARIANCE, detail::as_memory(variance, e->stat_md)}};
    if (weight.defined()) args[DNNL_ARG_SCALE] = detail::as_memory(weight, e->stat_md);
    if (bias.defined()) args[DNNL_ARG_SHIFT] = detail::as_memory(bias, e->stat_md);
    e->fwd.execute(detail::cpu_stream(), args);
  } catch (const dnnl::error& err) {
    detail::rethrow_dnnl("batch_norm inference", err);
  }
  return y;
}

bool batch_norm_supported(const Tensor& x) {
  const bool dtype_ok = x.dtype() == DType::FLOAT32 ||
                        (x.dtype() == DType::BFLOAT16 && dnnl_supports(DType::BFLOAT16, "batch_norm"));
  return dtype_ok && x.dim() >= 2 && x.dim() <= 4 && x.numel() > 0;
}

namespace {

Tensor batch_norm_forward_into(const Tensor& x, const Tensor& weight, const Tensor& bias, double epsilon,
                               BatchNormStats& stats) {
  CREW_CHECK(batch_norm_supported(x), "batch_norm (oneDNN): unsupported input ", shape_str(x.shape()), " ",
             dtype_name(x.dtype()));
  for (const Tensor* t : {&weight, &bias}) {
    CREW_CHECK_T(DTypeError, !t->defined() || t->dtype() == DType::FLOAT32,
                 "batch_norm (oneDNN): weight and bias must be float32, got ", dtype_name(t->dtype()));
  }
  const detail::DnnlLayout* layout = detail::dnnl_layout_of(x);
  stats.mean = Tensor::uninitialized({x.size(1)});
  stats.variance = Tensor::uninitialized({x.size(1)});
  Tensor y = detail::new_in(x, layout);
  try {
    auto e = bn_entry(x.shape(), x.dtype(), layout, weight.defined(), bias.defined(), epsilon);
    std::unordered_map<int, dnnl::memory> args{
        {DNNL_ARG_SRC, data_memory(*e, x, layout)},
        {DNNL_ARG_DST, data_memory(*e, y, layout)},
        {DNNL_ARG_MEAN, detail::as_memory(stats.mean, e->stat_md)},
        {DNNL_ARG_VARIANCE, detail::as_memory(stats.variance, e->stat_md)}};
    if (weight.defined()) args[DNNL_ARG_SCALE] = detail::as_memory(weight, e->stat_md);
    if (bias.defined()) args[DNNL_ARG_SHIFT] = detail::as_memory(bias, e->stat_md);
    e->fwd.execute(detail::cpu_stream(), args);
  } catch (const dnnl::error& err) {
    detail::rethrow_dnnl("batch_norm forward", err);
  }
  return y;
}

BatchNormGrads batch_norm_backward_grads(const Tensor& grad_y, const Tensor& x, const Tensor& weight,
                                         const Tensor& bias, double epsilon, const BatchNormStats& stats) {
  CREW_CHECK(grad_y.shape() == x.shape() && grad_y.dtype() == x.dtype(), "batch_norm backward: grad ",
             shape_str(grad_y.shape()), " does not match input ", shape_str(x.shape()));
  // Blocked when x is (a conv's output): a row-major grad_y is reordered into x's layout.
  const detail::DnnlLayout* layout = detail::dnnl_layout_of(x);
  const Tensor g = layout ? detail::in_layout(grad_y, *layout) : grad_y;
  BatchNormGrads out;
  out.x = detail::new_in(x, layout);
  if (weight.defined()) out.weight = Tensor::uninitialized({x.size(1)});
  if (bias.defined()) out.bias = Tensor::uninitialized({x.size(1)});
  try {
    auto e = bn_entry(x.shape(), x.dtype(), layout, weight.defined(), bias.defined(), epsilon);
    std::unordered_map<int, dnnl::memory> args{
        {DNNL_ARG_SRC, data_memory(*e, x, layout)},
        {DNNL_ARG_DIFF_DST, data_memory(*e, g, layout)},
        {DNNL_ARG_DIFF_SRC, data_memory(*e, out.x, layout)},
        {DNNL_ARG_MEAN, detail::as_memory(stats.mean, e->stat_md)},
        {DNNL_ARG_VARIANCE, detail::as_memory(stats.variance, e->stat_md)}};
    if (weight.defined()) {
      args[DNNL_ARG_SCALE] = detail::as_memory(weight, e->stat_md);
      args[DNNL_ARG_DIFF_SCALE] = detail::as_memory(out.weight, e->stat_md);
    }
    if (bias.defined()) {  // oneDNN 2.x binds the shift in backward too, though the result ignores it
      args[DNNL_ARG_SHIFT] = detail::as_memory(bias, e->stat_md);
      args[DNNL_ARG_DIFF_SHIFT] = detail::as_memory(out.bias, e->stat_md);
    }
    e->bwd.execute(detail::cpu_stream(), args);
  } catch (const dnnl::error& err) {
    detail::rethrow_dnnl("batch_norm backward", err);
  }
  return out;
}

std::tuple<Tensor, Tensor, Tensor> batch_norm_forward_cpu(const Tensor& x, const Tensor& weight,
                                                          const Tensor& bias, double epsilon) {
  BatchNormStats stats;
  Tensor y = batch_norm_forward_into(x, weight, bias, epsilon, stats);
  return {y, stats.mean, stats.variance};
}

std::tuple<Tensor, Tensor, Tensor> batch_norm_backward_cpu(const Tensor& grad_y, const Tensor& x,
                                                           const Tensor& weight, const Tensor& bias,
                                                           double epsilon, const Tensor& mean,
                                                           const Tensor& variance) {
  BatchNormGrads g = batch_norm_backward_grads(grad_y, x, weight, bias, epsilon, {mean, variance});
  return {g.x, g.weight, g.bias};
}

}  // namespace

constinit KernelSlot<BatchNormForwardFn> batch_norm_forward_kernel("batch_norm_forward",
                                                                   &batch_norm_forward_cpu);
constinit KernelSlot<BatchNormBackwardFn> batch_norm_backward_kernel("batch_norm_backward",
                                                                     &batch_norm_backward_cpu);

Tensor batch_norm_forward(const Tensor& x, const Tensor& weight, const Tensor& bias, double epsilon,
                          BatchNormStats& stats) {
  check_same_place("batch_norm", {{"x", &x}, {"weight", &weight}, {"bias", &bias}});
  Tensor y;
  std::tie(y, stats.mean, stats.variance) =
      batch_norm_forward_kernel.get(x.place().type)(x, weight, bias, epsilon);
  return y;
}

BatchNormGrads batch_norm_backward(const Tensor& grad_y, const Tensor& x, const Tensor& weight,
                                   const Tensor& bias, double epsilon, const BatchNormStats& stats) {
  check_same_place("batch_norm backward", {{"grad_y", &grad_y}, {"x", &x}, {"weight", &weight}});
  BatchNormGrads out;
  std::tie(out.x, out.weight, out.bias) = batch_norm_backward_kernel.get(x.place().type)(
      grad_y, x, weight, bias, epsilon, stats.mean, stats.variance);
  return out;
}

}  // namespace crew::kernels
