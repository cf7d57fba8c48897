// batch_norm over the channel axis of [N, C, ...] (training and inference), optionally with
// statistics synchronised over ranks (SyncBatchNorm, through a BatchNormStatsSync). Float32
// training without a sync runs on oneDNN; the rest (inference, SyncBatchNorm's global
// statistics, float64) on the loops here.
#include <cmath>

#include "crew/autograd/function.h"
#include "crew/nn/functional.h"
#include "crew/tensor/kernels/batch_norm.h"
#include "crew/tensor/kernels/broadcast.h"

namespace crew::nn::functional {
namespace {

using SyncPtr = std::shared_ptr<BatchNormStatsSync>;

struct Layout {
  int64_t n = 1, c = 1, spatial = 1;
};

// Per-channel statistics and the saved values backward needs.
struct Saved {
  std::vector<double> mean, invstd, scale;  // scale = weight or 1
  double count = 0;                         // elements per channel of the (global) batch
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

// mean and biased variance per channel (as Paddle normalises and tracks it); with a sync,
// those of every rank's batch: all-reduce [count, sum per channel], then the sums of squared
// deviations from the global mean (two passes, as one process over the whole batch).
// Returns the number of elements per channel the statistics cover.
template <typename T>
double batch_stats(const T* x, const Layout& l, BatchNormStatsSync* sync, std::vector<double>& mean,
                   std::vector<double>& var) {
  double count = static_cast<double>(l.n * l.spatial);
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
  if (sync) {
    std::vector<double> buf(mean);
    buf.push_back(count);
    sync->all_reduce_sum(buf.data(), static_cast<int64_t>(buf.size()));
    count = buf.back();
    CREW_CHECK(count > 0, "batch_norm: training needs a non-empty batch over all ranks, got ", count,
               " elements per channel");
    mean.assign(buf.begin(), buf.end() - 1);
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
  if (sync) sync->all_reduce_sum(var.data(), l.c);
  for (double& v : var) v /= count;
  return count;
}

// Per channel: sum g and sum g * xhat over this process's batch.
template <typename T>
void grad_sums(const T* gp, const T* xp, const Layout& l, const Saved& s, std::vector<double>& sum_g,
               std::vector<double>& sum_gx) {
  sum_g.assign(l.c, 0.0);
  sum_gx.assign(l.c, 0.0);
  for (int64_t i = 0; i < l.n; ++i) {
    for (int64_t ch = 0; ch < l.c; ++ch) {
      const int64_t base = (i * l.c + ch) * l.spatial;
      for (int64_t k = 0; k < l.spatial; ++k) {
        sum_g[ch] += gp[base + k];
        sum_gx[ch] += gp[base + k] * (xp[base + k] - s.mean[ch]) * s.invstd[ch];
      }
    }
  }
}

template <typename T>
Tensor input_grad(const T* gp, const Tensor& x, const Layout& l, const Saved& s, bool training,
                  const std::vector<double>& sum_g, const std::vector<double>& sum_gx) {
  const T* xp = x.data<T>();
  Tensor out = Tensor::empty(x.shape(), x.dtype());
  T* gx = out.data<T>();
  for (int64_t i = 0; i < l.n; ++i) {
    for (int64_t ch = 0; ch < l.c; ++ch) {
      const int64_t base = (i * l.c + ch) * l.spatial;
      const double f = s.scale[ch] * s.invstd[ch];
      for (int64_t k = 0; k < l.spatial; ++k) {
        double v = gp[base + k];
        if (training) {
          const double xhat = (xp[base + k] - s.mean[ch]) * s.invstd[ch];
          v -= (sum_g[ch] + xhat * sum_gx[ch]) / s.count;
        }
        gx[base + k] = static_cast<T>(v * f);
      }
    }
  }
  return out;
}

// grads: x, weight, bias. Training backpropagates through the batch statistics; with a sync
// through those of every rank's batch, so the input gradient sums every rank's upstream
// gradient. Weight and bias gradients stay this process's sums (DataParallel averages them).
template <typename T>
std::vector<Tensor> backward(const Tensor& g, const Tensor& x, const Layout& l, const Saved& s, bool training,
                             BatchNormStatsSync* sync, const std::vector<bool>& needs) {
  std::vector<double> sum_g, sum_gx;
  grad_sums(g.data<T>(), x.data<T>(), l, s, sum_g, sum_gx);
  auto channel_tensor = [&](const std::vector<double>& v) {
    Tensor t = Tensor::empty({l.c}, x.dtype());
    T* p = t.data<T>();
    for (int64_t ch = 0; ch < l.c; ++ch) p[ch] = static_cast<T>(v[ch]);
    return t;
  };
  std::vector<Tensor> grads(3);
  if (needs[1]) grads[1] = channel_tensor(sum_gx);
  if (needs[2]) grads[2] = channel_tensor(sum_g);
  if (needs[0]) {
    if (training && sync) {
      std::vector<double> buf(sum_g);
      buf.insert(buf.end(), sum_gx.begin(), sum_gx.end());
      sync->all_reduce_sum(buf.data(), 2 * l.c);
      sum_g.assign(buf.begin(), buf.begin() + l.c);
      sum_gx.assign(buf.begin() + l.c, buf.end());
    }
    grads[0] = input_grad(g.data<T>(), x, l, s, training, sum_g, sum_gx);
  }
  return grads;
}

void check_channel_tensor(const Tensor& t, int64_t c, DType dtype, const char* what) {
  if (!t.defined()) return;
  CREW_CHECK(t.numel() == c && t.dtype() == dtype, "batch_norm: ", what, " ", shape_str(t.shape()), " ",
             dtype_name(t.dtype()), " does not match ", c, " channels of ", dtype_name(dtype));
}

Layout check_inputs(const Tensor& x, const Tensor& running_mean, const Tensor& running_var,
                    const Tensor& weight, const Tensor& bias, bool training, bool synced) {
  kernels::check_floating(x, "batch_norm");
  CREW_CHECK(x.dim() >= 2, "batch_norm: input must be [N, C, ...], got shape ", shape_str(x.shape()));
  Layout l{x.size(0), x.size(1), 1};
  for (int64_t d = 2; d < x.dim(); ++d) l.spatial *= x.size(d);
  CREW_CHECK(running_mean.defined() && running_var.defined(), "batch_norm: running statistics are undefined");
  check_channel_tensor(running_mean, l.c, x.dtype(), "running_mean");
  check_channel_tensor(running_var, l.c, x.dtype(), "running_var");
  check_channel_tensor(weight, l.c, x.dtype(), "weight");
  check_channel_tensor(bias, l.c, x.dtype(), "bias");
  // Synced, one rank's share may be empty: the global count is checked after its all_reduce.
  if (training && !synced) CREW_CHECK(l.n * l.spatial > 0, "batch_norm: training needs a non-empty batch");
  return l;
}

template <typename T>
void update_running(Tensor& running_mean, Tensor& running_var, const std::vector<double>& mean,
                    const std::vector<double>& var, double momentum) {
  T* rm = running_mean.data<T>();
  T* rv = running_var.data<T>();
  for (size_t ch = 0; ch < mean.size(); ++ch) {
    rm[ch] = static_cast<T>(momentum * rm[ch] + (1 - momentum) * mean[ch]);
    rv[ch] = static_cast<T>(momentum * rv[ch] + (1 - momentum) * var[ch]);
  }
}

// Training without a sync, float32: oneDNN's primitives (crew/tensor/kernels/batch_norm.h),
// which keep a blocked x blocked; the running statistics follow the batch's as below.
Tensor batch_norm_onednn(const Tensor& x, Tensor& running_mean, Tensor& running_var, const Tensor& weight,
                         const Tensor& bias, double momentum, double epsilon) {
  kernels::BatchNormStats stats;
  Tensor y = kernels::batch_norm_forward(x, weight, bias, epsilon, stats);
  update_running<float>(running_mean, running_var, stats.mean.to_vector<double>(),
                        stats.variance.to_vector<double>(), momentum);
  if (autograd::should_record({&x, &weight, &bias})) {
    autograd::record(y, "batch_norm", {x, weight, bias},
                     [x = x.detach(), w = weight.defined() ? weight.detach() : Tensor(),
                      b = bias.defined() ? bias.detach() : Tensor(), stats,
                      epsilon](const Tensor& g, const std::vector<bool>&) {
                       kernels::BatchNormGrads gr = kernels::batch_norm_backward(g, x, w, b, epsilon, stats);
                       return std::vector<Tensor>{gr.x, gr.weight, gr.bias};
                     },
                     {x, weight, bias});
  }
  return y;
}

}  // namespace

Tensor batch_norm(const Tensor& x, Tensor& running_mean, Tensor& running_var, const Tensor& weight,
                  const Tensor& bias, bool training, double momentum, double epsilon, SyncPtr sync) {
  const Layout l = check_inputs(x, running_mean, running_var, weight, bias, training, sync != nullptr);
  // SyncBatchNorm keeps the loops even alone: one process and N ranks compute alike.
  if (training && sync == nullptr && kernels::batch_norm_supported(x)) {
    return batch_norm_onednn(x, running_mean, running_var, weight, bias, momentum, epsilon);
  }
  Saved s;
  s.count = static_cast<double>(l.n * l.spatial);
  std::vector<double> var;
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T>) {
      if (training) {
        s.count = batch_stats(x.data<T>(), l, sync.get(), s.mean, var);
        update_running<T>(running_mean, running_var, s.mean, var, momentum);
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
  if (!training) sync = nullptr;  // inference never communicates
  if (autograd::should_record({&x, &weight, &bias})) {
    autograd::record(y, "batch_norm", {x, weight, bias},
                     [x, l, s, training, sync](const Tensor& g, const std::vector<bool>& needs) {
                       if (g.dtype() == DType::FLOAT32)
                         return backward<float>(g, x, l, s, training, sync.get(), needs);
                       return backward<double>(g, x, l, s, training, sync.get(), needs);
                     },
                     {x});  // the weight's values are in s.scale
  }
  return y;
}

}  // namespace crew::nn::functional
