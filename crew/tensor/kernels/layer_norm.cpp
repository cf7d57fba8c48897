#include "crew/tensor/kernels/layer_norm.h"

#include <cmath>

#include "crew/core/check.h"
#include "crew/tensor/kernels/dnnl_context.h"
#include "crew/tensor/kernels/low_precision.h"
#include "crew/tensor/kernels/math/layer_norm_row.h"

namespace crew::kernels {
namespace {

struct LnEntry {
  dnnl::memory::desc data_md, stat_md, param_md;
  dnnl::layer_normalization_forward fwd;
  dnnl::layer_normalization_backward bwd;
};

dnnl::normalization_flags flags_of(bool scale, bool shift) {
  auto f = dnnl::normalization_flags::none;
  if (scale) f |= dnnl::normalization_flags::use_scale;
  if (shift) f |= dnnl::normalization_flags::use_shift;
  return f;
}

// dtype: the data's (float32 or bfloat16); statistics, scale and shift are float32 either way.
std::shared_ptr<LnEntry> ln_entry(int64_t rows, int64_t cols, DType dtype, bool scale, bool shift,
                                  double epsilon) {
  static detail::PrimitiveCache<LnEntry> cache;
  return cache.get(str_cat(rows, ',', cols, ',', dtype_name(dtype), ',', scale, shift, ',', epsilon), [&] {
    auto e = std::make_shared<LnEntry>();
    e->data_md = detail::plain_desc({rows, cols}, detail::dnnl_type(dtype));
    e->stat_md = detail::plain_desc({rows});
    e->param_md = detail::plain_desc({cols});
    const auto flags = flags_of(scale, shift);
    const float eps = static_cast<float>(epsilon);
    dnnl::layer_normalization_forward::desc fd(dnnl::prop_kind::forward_training, e->data_md, e->stat_md, eps,
                                               flags);
    dnnl::layer_normalization_forward::primitive_desc fpd(fd, detail::cpu_engine());
    e->fwd = dnnl::layer_normalization_forward(fpd);
    const auto bprop = scale || shift ? dnnl::prop_kind::backward : dnnl::prop_kind::backward_data;
    dnnl::layer_normalization_backward::desc bd(bprop, e->data_md, e->data_md, e->stat_md, eps, flags);
    e->bwd = dnnl::layer_normalization_backward(
        dnnl::layer_normalization_backward::primitive_desc(bd, detail::cpu_engine(), fpd));
    return e;
  });
}

// Statistics (and, for 16-bit data, gamma/beta and their gradients) are float32 unless x is float64.
DType stat_dtype(const Tensor& x) { return x.dtype() == DType::FLOAT64 ? DType::FLOAT64 : DType::FLOAT32; }

// bfloat16 runs on oneDNN where the CPU has bf16 primitives; other 16-bit cases go through float32.
bool via_float32(const Tensor& x) { return is_low_precision(x.dtype()) && !dnnl_supports(x.dtype(), "layer_norm"); }

void check_params(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  if (!is_low_precision(x.dtype())) return;
  for (const Tensor* t : {&weight, &bias}) {
    CREW_CHECK_T(DTypeError, !t->defined() || t->dtype() == DType::FLOAT32, "layer_norm (", dtype_name(x.dtype()),
                 " input): weight and bias must be float32, got ", dtype_name(t->dtype()));
  }
}

using Row = math::LayerNormRow<double>;

void forward_rows(const double* x, double* y, const double* w, const double* b, int64_t rows, int64_t cols,
                  double eps, double* mean, double* var) {
  for (int64_t r = 0; r < rows; ++r) {
    Row::stats(x + r * cols, cols, mean[r], var[r]);
    Row::normalize(x + r * cols, cols, mean[r], Row::rstd(var[r], eps), w, b, y + r * cols);
  }
}

void backward_rows(const double* g, const double* x, const double* w, int64_t rows, int64_t cols, double eps,
                   const double* mean, const double* var, double* dx, double* dw, double* db) {
  for (int64_t r = 0; r < rows; ++r) {
    Row::backward(g + r * cols, x + r * cols, cols, mean[r], Row::rstd(var[r], eps), w, dx + r * cols, dw,
                  db);
  }
}

const double* data_or_null(const Tensor& t) { return t.defined() ? t.data<double>() : nullptr; }

Tensor layer_norm_forward_into(const Tensor& x, int64_t rows, int64_t cols, const Tensor& weight,
                               const Tensor& bias, double epsilon, LayerNormStats& stats) {
  Tensor y = Tensor::uninitialized(x.shape(), x.dtype());
  stats.mean = Tensor::uninitialized({rows}, stat_dtype(x));
  stats.variance = Tensor::uninitialized({rows}, stat_dtype(x));
  if (rows == 0 || cols == 0) return y;
  if (x.dtype() == DType::FLOAT64) {
    forward_rows(x.data<double>(), y.data<double>(), data_or_null(weight), data_or_null(bias), rows, cols,
                 epsilon, stats.mean.data<double>(), stats.variance.data<double>());
    return y;
  }
  try {
    auto e = ln_entry(rows, cols, x.dtype(), weight.defined(), bias.defined(), epsilon);
    std::unordered_map<int, dnnl::memory> args{
        {DNNL_ARG_SRC, detail::as_memory(x, e->data_md)},
        {DNNL_ARG_DST, detail::as_memory(y, e->data_md)},
        {DNNL_ARG_MEAN, detail::as_memory(stats.mean, e->stat_md)},
        {DNNL_ARG_VARIANCE, detail::as_memory(stats.variance, e->stat_md)}};
    if (weight.defined()) args[DNNL_ARG_SCALE] = detail::as_memory(weight, e->param_md);
    if (bias.defined()) args[DNNL_ARG_SHIFT] = detail::as_memory(bias, e->param_md);
    e->fwd.execute(detail::cpu_stream(), args);
  } catch (const dnnl::error& err) {
    detail::rethrow_dnnl("layer_norm forward", err);
  }
  return y;
}

LayerNormGrads layer_norm_backward_grads(const Tensor& grad_y, const Tensor& x, int64_t rows, int64_t cols,
                                         const Tensor& weight, const Tensor& bias, double epsilon,
                                         const LayerNormStats& stats) {
  LayerNormGrads out;
  out.x = Tensor::uninitialized(x.shape(), x.dtype());
  if (weight.defined()) out.weight = Tensor::zeros({cols}, stat_dtype(x));
  const bool has_bias = bias.defined();
  if (has_bias) out.bias = Tensor::zeros({cols}, stat_dtype(x));
  if (rows == 0 || cols == 0) return out;
  if (x.dtype() == DType::FLOAT64) {
    backward_rows(grad_y.data<double>(), x.data<double>(), data_or_null(weight), rows, cols, epsilon,
                  stats.mean.data<double>(), stats.variance.data<double>(), out.x.data<double>(),
                  out.weight.defined() ? out.weight.data<double>() : nullptr,
                  out.bias.defined() ? out.bias.data<double>() : nullptr);
    return out;
  }
  try {
    auto e = ln_entry(rows, cols, x.dtype(), weight.defined(), has_bias, epsilon);
    std::unordered_map<int, dnnl::memory> args{
        {DNNL_ARG_SRC, detail::as_memory(x, e->data_md)},
        {DNNL_ARG_DIFF_DST, detail::as_memory(grad_y, e->data_md)},
        {DNNL_ARG_DIFF_SRC, detail::as_memory(out.x, e->data_md)},
        {DNNL_ARG_MEAN, detail::as_memory(stats.mean, e->stat_md)},
        {DNNL_ARG_VARIANCE, detail::as_memory(stats.variance, e->stat_md)}};
    if (weight.defined()) {
      args[DNNL_ARG_SCALE] = detail::as_memory(weight, e->param_md);
      args[DNNL_ARG_DIFF_SCALE] = detail::as_memory(out.weight, e->param_md);
    }
    if (has_bias) {  // oneDNN 2.x binds the shift in backward too, though the result ignores it
      args[DNNL_ARG_SHIFT] = detail::as_memory(bias, e->param_md);
      args[DNNL_ARG_DIFF_SHIFT] = detail::as_memory(out.bias, e->param_md);
    }
    e->bwd.execute(detail::cpu_stream(), args);
  } catch (const dnnl::error& err) {
    detail::rethrow_dnnl("layer_norm backward", err);
  }
  return out;
}

std::tuple<Tensor, Tensor, Tensor> layer_norm_forward_cpu(const Tensor& x, int64_t rows, int64_t cols,
                                                          const Tensor& weight, const Tensor& bias,
                                                          double epsilon) {
  check_params(x, weight, bias);
  LayerNormStats stats;
  if (via_float32(x)) {
    Tensor y = layer_norm_forward_into(to_float32(x), rows, cols, weight, bias, epsilon, stats);
    return {y.to(x.dtype()), stats.mean, stats.variance};
  }
  Tensor y = layer_norm_forward_into(x, rows, cols, weight, bias, epsilon, stats);
  return {y, stats.mean, stats.variance};
}

std::tuple<Tensor, Tensor, Tensor> layer_norm_backward_cpu(const Tensor& grad_y, const Tensor& x,
                                                           int64_t rows, int64_t cols, const Tensor& weight,
                                                           const Tensor& bias, double epsilon,
                                                           const Tensor& mean, const Tensor& variance) {
  check_params(x, weight, bias);
  CREW_CHECK_T(DTypeError, grad_y.dtype() == x.dtype(), "layer_norm backward: grad dtype ",
               dtype_name(grad_y.dtype()), " differs from input dtype ", dtype_name(x.dtype()));
  if (via_float32(x)) {
    LayerNormGrads g = layer_norm_backward_grads(to_float32(grad_y), to_float32(x), rows, cols, weight, bias,
                                                 epsilon, {mean, variance});
    return {g.x.to(x.dtype()), g.weight, g.bias};
  }
  LayerNormGrads g =
      layer_norm_backward_grads(grad_y, x, rows, cols, weight, bias, epsilon, {mean, variance});
  return {g.x, g.weight, g.bias};
}

}  // namespace

constinit KernelSlot<LayerNormForwardFn> layer_norm_forward_kernel("layer_norm_forward",
                                                                   &layer_norm_forward_cpu);
constinit KernelSlot<LayerNormBackwardFn> layer_norm_backward_kernel("layer_norm_backward",
                                                                     &layer_norm_backward_cpu);

Tensor layer_norm_forward(const Tensor& x, int64_t rows, int64_t cols, const Tensor& weight,
                          const Tensor& bias, double epsilon, LayerNormStats& stats) {
  check_same_place("layer_norm", {{"x", &x}, {"weight", &weight}, {"bias", &bias}});
  Tensor y;
  std::tie(y, stats.mean, stats.variance) =
      layer_norm_forward_kernel.get(x.place().type)(x, rows, cols, weight, bias, epsilon);
  return y;
}

LayerNormGrads layer_norm_backward(const Tensor& grad_y, const Tensor& x, int64_t rows, int64_t cols,
                                   const Tensor& weight, const Tensor& bias, double epsilon,
                                   const LayerNormStats& stats) {
  check_same_place("layer_norm backward",
                   {{"grad_y", &grad_y}, {"x", &x}, {"weight", &weight}, {"mean", &stats.mean}});
  LayerNormGrads out;
  std::tie(out.x, out.weight, out.bias) = layer_norm_backward_kernel.get(x.place().type)(
      grad_y, x, rows, cols, weight, bias, epsilon, stats.mean, stats.variance);
  return out;
}

}  // namespace crew::kernels
