// batch_norm over the channel axis of [N, C, ...] (training and inference).
#include <cmath>

#include "crew/autograd/function.h"
#include "crew/nn/functional.h"
#include "crew/tensor/kernels/broadcast.h"

namespace crew::nn::functional {
namespace {

struct Layout {
  int64_t n = 1, c = 1, spatial = 1;
};

// Per-channel statistics and the saved values backward needs.
struct Saved {
  std::vector<double> mean, invstd, scale;  // scale = weight or 1
};

template <typename T>
void normalize(const T* x, T* y, const Layout& l, const Saved& s, const T* bias) {
  for (int64_t i = 0; i < l.n; ++i) {
    for (int64_t ch = 0; ch < l.c; ++ch) {
      const T* src = x + (i * l.c + ch) * l.spatial;
      T* dst = y + (i * l.c + ch) * l.spatial;
      const T a = static_cast<T>(s.invstd[ch] * s.scale[ch]);
      const T b = static_cast<T>((bias ? static_cast<double>(bias[ch]) : 0.0) -
                                 s.mean[ch] * s.invstd[ch] * s.scale[ch]);
      for (int64_t k = 0; k < l.spatial; ++k) dst[k] = src[k] * a + b;
    }
  }
}

template <typename T>
void batch_stats(const T* x, const Layout& l, std::vector<double>& mean, std::vector<double>& var) {
  const double count = static_cast<double>(l.n * l.spatial);
  mean.assign(l.c, 0.0);
  var.assign(l.c, 0.0);
  for (int64_t i = 0; i < l.n; ++i) {
    for (int64_t ch = 0; ch < l.c; ++ch) {
      const T* src = x + (i * l.c + ch) * l.spatial;
      double acc = 0;
      for (int64_t k = 0; k < l.spatial; ++k) acc += src[k];
      mean[ch] += acc;
    }
  }
  for (double& m : mean) m /= count;
  for (int64_t i = 0; i < l.n; ++i) {
    for (int64_t ch = 0; ch < l.c; ++ch) {
      const T* src = x + (i * l.c + ch) * l.spatial;
      double acc = 0;
      for (int64_t k = 0; k < l.spatial; ++k) acc += (src[k] - mean[ch]) * (src[k] - mean[ch]);
      var[ch] += acc;
    }
  }
  for (double& v : var) v /= count;  // biased, as Paddle normalises and tracks it
}

// grads: x, weight, bias. Training backpropagates through the batch statistics.
template <typename T>
std::vector<Tensor> backward(const Tensor& g, const Tensor& x, const Layout& l, const Saved& s, bool training,
                             const std::vector<bool>& needs) {
  const T* gp = g.data<T>();
  const T* xp = x.data<T>();
  std::vector<double> sum_g(l.c, 0.0), sum_gx(l.c, 0.0);  // sum g, sum g * xhat
  for (int64_t i = 0; i < l.n; ++i) {
    for (int64_t ch = 0; ch < l.c; ++ch) {
      const int64_t base = (i * l.c + ch) * l.spatial;
      for (int64_t k = 0; k < l.spatial; ++k) {
        sum_g[ch] += gp[base + k];
        sum_gx[ch] += gp[base + k] * (xp[base + k] - s.mean[ch]) * s.invstd[ch];
      }
    }
  }
  std::vector<Tensor> grads(3);
  const double count = static_cast<double>(l.n * l.spatial);
  if (needs[0]) {
    grads[0] = Tensor::empty(x.shape(), x.dtype());
    T* gx = grads[0].data<T>();
    for (int64_t i = 0; i < l.n; ++i) {
      for (int64_t ch = 0; ch < l.c; ++ch) {
        const int64_t base = (i * l.c + ch) * l.spatial;
        const double f = s.scale[ch] * s.invstd[ch];
        for (int64_t k = 0; k < l.spatial; ++k) {
          double v = gp[base + k];
          if (training) {
            const double xhat = (xp[base + k] - s.mean[ch]) * s.invstd[ch];
            v -= (sum_g[ch] + xhat * sum_gx[ch]) / count;
          }
          gx[base + k] = static_cast<T>(v * f);
        }
      }
    }
  }
  auto channel_tensor = [&](const std::vector<double>& v) {
    Tensor t = Tensor::empty({l.c}, x.dtype());
    T* p = t.data<T>();
    for (int64_t ch = 0; ch < l.c; ++ch) p[ch] = static_cast<T>(v[ch]);
    return t;
  };
  if (needs[1]) grads[1] = channel_tensor(sum_gx);
  if (needs[2]) grads[2] = channel_tensor(sum_g);
  return grads;
}

void check_channel_tensor(const Tensor& t, int64_t c, DType dtype, const char* what) {
  if (!t.defined()) return;
  CREW_CHECK(t.numel() == c && t.dtype() == dtype, "batch_norm: ", what, " ", shape_str(t.shape()), " ",
             dtype_name(t.dtype()), " does not match ", c, " channels of ", dtype_name(dtype));
}

}  // namespace

Tensor batch_norm(const Tensor& x, Tensor& running_mean, Tensor& running_var, const Tensor& weight,
                  const Tensor& bias, bool training, double momentum, double epsilon) {
  kernels::check_floating(x, "batch_norm");
  CREW_CHECK(x.dim() >= 2, "batch_norm: input must be [N, C, ...], got shape ", shape_str(x.shape()));
  Layout l{x.size(0), x.size(1), 1};
  for (int64_t d = 2; d < x.dim(); ++d) l.spatial *= x.size(d);
  CREW_CHECK(running_mean.defined() && running_var.defined(), "batch_norm: running statistics are undefined");
  check_channel_tensor(running_mean, l.c, x.dtype(), "running_mean");
  check_channel_tensor(running_var, l.c, x.dtype(), "running_var");
  check_channel_tensor(weight, l.c, x.dtype(), "weight");
  check_channel_tensor(bias, l.c, x.dtype(), "bias");
  if (training) CREW_CHECK(l.n * l.spatial > 0, "batch_norm: training needs a non-empty batch");
  Saved s;
  std::vector<double> var;
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T>) {
      if (training) {
        batch_stats(x.data<T>(), l, s.mean, var);
        T* rm = running_mean.data<T>();
        T* rv = running_var.data<T>();
        for (int64_t ch = 0; ch < l.c; ++ch) {
          rm[ch] = static_cast<T>(momentum * rm[ch] + (1 - momentum) * s.mean[ch]);
          rv[ch] = static_cast<T>(momentum * rv[ch] + (1 - momentum) * var[ch]);
        }
      } else {
        s.mean = running_mean.to_vector<double>();
        var = running_var.to_vector<double>();
      }
    }
  });
  s.invstd.resize(l.c);
  for (int64_t ch = 0; ch < l.c; ++ch) s.invstd[ch] = 1.0 / std::sqrt(var[ch] + epsilon);
  s.scale = weight.defined() ? weight.to_vector<double>() : std::vector<double>(l.c, 1.0);
  Tensor y = Tensor::empty(x.shape(), x.dtype());
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T>) {
      normalize(x.data<T>(), y.data<T>(), l, s, bias.defined() ? bias.data<T>() : nullptr);
    }
  });
  if (autograd::should_record({&x, &weight, &bias})) {
    autograd::record(y, "batch_norm", {x, weight, bias},
                     [x, l, s, training](const Tensor& g, const std::vector<bool>& needs) {
                       if (g.dtype() == DType::FLOAT32) return backward<float>(g, x, l, s, training, needs);
                       return backward<double>(g, x, l, s, training, needs);
                     });
  }
  return y;
}

}  // namespace crew::nn::functional
