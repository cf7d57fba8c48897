#include "crew/tensor/kernels/batch_norm_loops.h"

#include <type_traits>

namespace crew::kernels {
namespace {

struct Layout {
  int64_t n = 1, c = 1, spatial = 1;
};

Layout layout_of(const Tensor& x) {
  Layout l{x.size(0), x.size(1), 1};
  for (int64_t d = 2; d < x.dim(); ++d) l.spatial *= x.size(d);
  return l;
}

// Runs f(T{}) for x's floating dtype.
template <typename F>
void floating(const Tensor& x, F f) {
  dispatch_dtype(x.dtype(), [&](auto tag) {
    if constexpr (std::is_floating_point_v<decltype(tag)>) f(tag);
  });
}

// Per channel c: the sum over the batch and positions of term(x, c), accumulated in double.
template <typename Term>
Tensor channel_reduce(const Tensor& x, Term term) {
  const Layout l = layout_of(x);
  Tensor out = Tensor::empty({l.c}, DType::FLOAT64);
  double* sum = out.data<double>();
  floating(x, [&](auto tag) {
    using T = decltype(tag);
    const T* xp = x.data<T>();
    for (int64_t i = 0; i < l.n; ++i) {
      for (int64_t ch = 0; ch < l.c; ++ch) {
        const T* src = xp + (i * l.c + ch) * l.spatial;
        double acc = 0;
        for (int64_t k = 0; k < l.spatial; ++k) acc += term(src[k], ch);
        sum[ch] += acc;
      }
    }
  });
  return out;
}

Tensor channel_sums_cpu(const Tensor& x) {
  return channel_reduce(x, [](auto v, int64_t) { return v; });
}

Tensor channel_sq_dev_cpu(const Tensor& x, const Tensor& mean_t) {
  const double* mean = mean_t.data<double>();
  return channel_reduce(x, [mean](auto v, int64_t ch) { return (v - mean[ch]) * (v - mean[ch]); });
}

Tensor normalize_cpu(const Tensor& x, const Tensor& mean_t, const Tensor& invstd_t, const Tensor& scale_t,
                     const Tensor& bias_t) {
  const Layout l = layout_of(x);
  Tensor y = Tensor::empty(x.shape(), x.dtype());
  const double* mean = mean_t.data<double>();
  const double* invstd = invstd_t.data<double>();
  const double* scale = scale_t.data<double>();
  floating(x, [&](auto tag) {
    using T = decltype(tag);
    const T* xp = x.data<T>();
    T* yp = y.data<T>();
    const T* bias = bias_t.defined() ? bias_t.data<T>() : nullptr;
    for (int64_t i = 0; i < l.n; ++i) {
      for (int64_t ch = 0; ch < l.c; ++ch) {
        const T* src = xp + (i * l.c + ch) * l.spatial;
        T* dst = yp + (i * l.c + ch) * l.spatial;
        const T a = static_cast<T>(invstd[ch] * scale[ch]);
        const T b =
            static_cast<T>((bias ? static_cast<double>(bias[ch]) : 0.0) - mean[ch] * invstd[ch] * scale[ch]);
        for (int64_t k = 0; k < l.spatial; ++k) dst[k] = src[k] * a + b;
      }
    }
  });
  return y;
}

std::pair<Tensor, Tensor> grad_sums_cpu(const Tensor& g, const Tensor& x, const Tensor& mean_t,
                                        const Tensor& invstd_t) {
  const Layout l = layout_of(x);
  Tensor sum_g_t = Tensor::empty({l.c}, DType::FLOAT64), sum_gx_t = Tensor::empty({l.c}, DType::FLOAT64);
  double* sum_g = sum_g_t.data<double>();
  double* sum_gx = sum_gx_t.data<double>();
  const double* mean = mean_t.data<double>();
  const double* invstd = invstd_t.data<double>();
  floating(x, [&](auto tag) {
    using T = decltype(tag);
    const T* gp = g.data<T>();
    const T* xp = x.data<T>();
    for (int64_t i = 0; i < l.n; ++i) {
      for (int64_t ch = 0; ch < l.c; ++ch) {
        const int64_t base = (i * l.c + ch) * l.spatial;
        for (int64_t k = 0; k < l.spatial; ++k) {
          sum_g[ch] += gp[base + k];
          sum_gx[ch] += gp[base + k] * (xp[base + k] - mean[ch]) * invstd[ch];
        }
      }
    }
  });
  return {sum_g_t, sum_gx_t};
}

Tensor input_grad_cpu(const Tensor& g, const Tensor& x, const Tensor& mean_t, const Tensor& invstd_t,
                      const Tensor& scale_t, const Tensor& sum_g_t, const Tensor& sum_gx_t, double count,
                      bool training) {
  const Layout l = layout_of(x);
  Tensor out = Tensor::empty(x.shape(), x.dtype());
  const double* mean = mean_t.data<double>();
  const double* invstd = invstd_t.data<double>();
  const double* scale = scale_t.data<double>();
  const double* sum_g = training ? sum_g_t.data<double>() : nullptr;
  const double* sum_gx = training ? sum_gx_t.data<double>() : nullptr;
  floating(x, [&](auto tag) {
    using T = decltype(tag);
    const T* gp = g.data<T>();
    const T* xp = x.data<T>();
    T* gx = out.data<T>();
    for (int64_t i = 0; i < l.n; ++i) {
      for (int64_t ch = 0; ch < l.c; ++ch) {
        const int64_t base = (i * l.c + ch) * l.spatial;
        const double f = scale[ch] * invstd[ch];
        for (int64_t k = 0; k < l.spatial; ++k) {
          double v = gp[base + k];
          if (training) {
            const double xhat = (xp[base + k] - mean[ch]) * invstd[ch];
            v -= (sum_g[ch] + xhat * sum_gx[ch]) / count;
          }
          gx[base + k] = static_cast<T>(v * f);
        }
      }
    }
  });
  return out;
}

void update_running_cpu(const Tensor& running_mean, const Tensor& running_var, const Tensor& mean_t,
                        const Tensor& var_t, double momentum) {
  const double* mean = mean_t.data<double>();
  const double* var = var_t.data<double>();
  floating(running_mean, [&](auto tag) {
    using T = decltype(tag);
    T* rm = running_mean.data<T>();
    T* rv = running_var.data<T>();
    for (int64_t ch = 0, c = mean_t.numel(); ch < c; ++ch) {
      rm[ch] = static_cast<T>(momentum * rm[ch] + (1 - momentum) * mean[ch]);
      rv[ch] = static_cast<T>(momentum * rv[ch] + (1 - momentum) * var[ch]);
    }
  });
}

}  // namespace

constinit KernelSlot<BatchNormChannelSumsFn> batch_norm_channel_sums_kernel("batch_norm_channel_sums",
                                                                            &channel_sums_cpu);
constinit KernelSlot<BatchNormChannelSqDevFn> batch_norm_channel_sq_dev_kernel("batch_norm_channel_sq_dev",
                                                                               &channel_sq_dev_cpu);
constinit KernelSlot<BatchNormNormalizeFn> batch_norm_normalize_kernel("batch_norm_normalize",
                                                                       &normalize_cpu);
constinit KernelSlot<BatchNormGradSumsFn> batch_norm_grad_sums_kernel("batch_norm_grad_sums", &grad_sums_cpu);
constinit KernelSlot<BatchNormInputGradFn> batch_norm_input_grad_kernel("batch_norm_input_grad",
                                                                        &input_grad_cpu);
constinit KernelSlot<BatchNormUpdateRunningFn> batch_norm_update_running_kernel("batch_norm_update_running",
                                                                                &update_running_cpu);

Tensor batch_norm_channel_sums(const Tensor& x) {
  return batch_norm_channel_sums_kernel.get(x.place().type)(x);
}

Tensor batch_norm_channel_sq_dev(const Tensor& x, const Tensor& mean) {
  check_same_place("batch_norm", {{"x", &x}, {"mean", &mean}});
  return batch_norm_channel_sq_dev_kernel.get(x.place().type)(x, mean);
}

Tensor batch_norm_normalize(const Tensor& x, const Tensor& mean, const Tensor& invstd, const Tensor& scale,
                            const Tensor& bias) {
  check_same_place("batch_norm",
                   {{"x", &x}, {"mean", &mean}, {"invstd", &invstd}, {"scale", &scale}, {"bias", &bias}});
  return batch_norm_normalize_kernel.get(x.place().type)(x, mean, invstd, scale, bias);
}

std::pair<Tensor, Tensor> batch_norm_grad_sums(const Tensor& grad_y, const Tensor& x, const Tensor& mean,
                                               const Tensor& invstd) {
  check_same_place("batch_norm backward",
                   {{"grad_y", &grad_y}, {"x", &x}, {"mean", &mean}, {"invstd", &invstd}});
  return batch_norm_grad_sums_kernel.get(x.place().type)(grad_y, x, mean, invstd);
}

Tensor batch_norm_input_grad(const Tensor& grad_y, const Tensor& x, const Tensor& mean, const Tensor& invstd,
                             const Tensor& scale, const Tensor& sum_g, const Tensor& sum_gx, double count,
                             bool training) {
  check_same_place("batch_norm backward",
                   {{"grad_y", &grad_y}, {"x", &x}, {"mean", &mean}, {"sum_g", &sum_g}});
  return batch_norm_input_grad_kernel.get(x.place().type)(grad_y, x, mean, invstd, scale, sum_g, sum_gx,
                                                          count, training);
}

void batch_norm_update_running(const Tensor& running_mean, const Tensor& running_var,
                               const Tensor& batch_mean, const Tensor& batch_var, double momentum) {
  check_same_place("batch_norm", {{"running_mean", &running_mean},
                                  {"running_var", &running_var},
                                  {"batch_mean", &batch_mean},
                                  {"batch_var", &batch_var}});
  batch_norm_update_running_kernel.get(running_mean.place().type)(running_mean, running_var, batch_mean,
                                                                  batch_var, momentum);
}

}  // namespace crew::kernels
