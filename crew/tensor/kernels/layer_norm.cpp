#include "crew/tensor/kernels/layer_norm.h"

#include <cmath>

#include "crew/core/check.h"
#include "crew/tensor/kernels/dnnl_context.h"

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

std::shared_ptr<LnEntry> ln_entry(int64_t rows, int64_t cols, bool scale, bool shift, double epsilon) {
  static detail::PrimitiveCache<LnEntry> cache;
  return cache.get(str_cat(rows, ',', cols, ',', scale, shift, ',', epsilon), [&] {
    auto e = std::make_shared<LnEntry>();
    e->data_md = detail::plain_desc({rows, cols});
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

void forward_rows(const double* x, double* y, const double* w, const double* b, int64_t rows, int64_t cols,
                  double eps, double* mean, double* var) {
  for (int64_t r = 0; r < rows; ++r) {
    const double* xr = x + r * cols;
    double m = 0, v = 0;
    for (int64_t c = 0; c < cols; ++c) m += xr[c];
    m /= static_cast<double>(cols);
    for (int64_t c = 0; c < cols; ++c) v += (xr[c] - m) * (xr[c] - m);
    v /= static_cast<double>(cols);
    const double rstd = 1 / std::sqrt(v + eps);
    for (int64_t c = 0; c < cols; ++c) {
      y[r * cols + c] = (xr[c] - m) * rstd * (w ? w[c] : 1.0) + (b ? b[c] : 0.0);
    }
    mean[r] = m, var[r] = v;
  }
}

// dx = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat)), dxhat = g * w.
void backward_rows(const double* g, const double* x, const double* w, int64_t rows, int64_t cols, double eps,
                   const double* mean, const double* var, double* dx, double* dw, double* db) {
  for (int64_t r = 0; r < rows; ++r) {
    const double rstd = 1 / std::sqrt(var[r] + eps);
    const double* gr = g + r * cols;
    const double* xr = x + r * cols;
    double s1 = 0, s2 = 0;
    for (int64_t c = 0; c < cols; ++c) {
      const double xhat = (xr[c] - mean[r]) * rstd, dxhat = gr[c] * (w ? w[c] : 1.0);
      s1 += dxhat, s2 += dxhat * xhat;
      if (dw) dw[c] += gr[c] * xhat;
      if (db) db[c] += gr[c];
    }
    s1 /= static_cast<double>(cols), s2 /= static_cast<double>(cols);
    for (int64_t c = 0; c < cols; ++c) {
      const double xhat = (xr[c] - mean[r]) * rstd;
      dx[r * cols + c] = rstd * (gr[c] * (w ? w[c] : 1.0) - s1 - xhat * s2);
    }
  }
}

const double* data_or_null(const Tensor& t) { return t.defined() ? t.data<double>() : nullptr; }

}  // namespace

Tensor layer_norm_forward(const Tensor& x, int64_t rows, int64_t cols, const Tensor& weight,
                          const Tensor& bias, double epsilon, LayerNormStats& stats) {
  Tensor y = Tensor::uninitialized(x.shape(), x.dtype());
  stats.mean = Tensor::uninitialized({rows}, x.dtype());
  stats.variance = Tensor::uninitialized({rows}, x.dtype());
  if (rows == 0 || cols == 0) return y;
  if (x.dtype() == DType::FLOAT64) {
    forward_rows(x.data<double>(), y.data<double>(), data_or_null(weight), data_or_null(bias), rows, cols,
                 epsilon, stats.mean.data<double>(), stats.variance.data<double>());
    return y;
  }
  try {
    auto e = ln_entry(rows, cols, weight.defined(), bias.defined(), epsilon);
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

LayerNormGrads layer_norm_backward(const Tensor& grad_y, const Tensor& x, int64_t rows, int64_t cols,
                                   const Tensor& weight, const Tensor& bias, double epsilon,
                                   const LayerNormStats& stats) {
  LayerNormGrads out;
  out.x = Tensor::uninitialized(x.shape(), x.dtype());
  if (weight.defined()) out.weight = Tensor::zeros({cols}, x.dtype());
  const bool has_bias = bias.defined();
  if (has_bias) out.bias = Tensor::zeros({cols}, x.dtype());
  if (rows == 0 || cols == 0) return out;
  if (x.dtype() == DType::FLOAT64) {
    backward_rows(grad_y.data<double>(), x.data<double>(), data_or_null(weight), rows, cols, epsilon,
                  stats.mean.data<double>(), stats.variance.data<double>(), out.x.data<double>(),
                  out.weight.defined() ? out.weight.data<double>() : nullptr,
                  out.bias.defined() ? out.bias.data<double>() : nullptr);
    return out;
  }
  try {
    auto e = ln_entry(rows, cols, weight.defined(), has_bias, epsilon);
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

}  // namespace crew::kernels
