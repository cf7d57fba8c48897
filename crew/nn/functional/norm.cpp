// batch_norm over the channel axis of [N, C, ...] (training and inference), optionally with
// statistics synchronised over ranks (SyncBatchNorm, through a BatchNormStatsSync). Float32
// training without a sync runs on oneDNN; the rest (inference, SyncBatchNorm's global
// statistics, float64) on the loops of crew/tensor/kernels/batch_norm_loops.h. 16-bit operands
// (mixed precision): a bfloat16 x trains on oneDNN's bf16 kernel with float32 statistics,
// weight and bias (16-bit ones cast up), its output bfloat16, and so does bfloat16 inference
// that records no gradient (oneDNN's global-stats kernel); elsewhere x is cast to float32.
#include <cmath>

#include "crew/autograd/function.h"
#include "crew/autograd/ops_cast.h"
#include "crew/nn/functional.h"
#include "crew/tensor/kernels/batch_norm.h"
#include "crew/tensor/kernels/batch_norm_loops.h"
#include "crew/tensor/kernels/broadcast.h"

namespace crew::nn::functional {
namespace {

using SyncPtr = std::shared_ptr<BatchNormStatsSync>;

struct Layout {
  int64_t n = 1, c = 1, spatial = 1;
};

// Per-channel statistics (float64 [C] on x's place) and what backward needs.
struct Saved {
  Tensor mean, invstd, scale;  // scale = weight or 1
  double count = 0;            // elements per channel of the (global) batch
};

// values as a float64 tensor on `place`.
Tensor channel_tensor(const std::vector<double>& values, const Place& place) {
  return Tensor::from_vector(values, {static_cast<int64_t>(values.size())}).to(place);
}

// mean and biased variance per channel (as Paddle normalises and tracks it); with a sync,
// those of every rank's batch: all-reduce [sum per channel, count], then the sums of squared
// deviations from the global mean (two passes, as one process over the whole batch).
// Returns the number of elements per channel the statistics cover.
double batch_stats(const Tensor& x, const Layout& l, BatchNormStatsSync* sync, Tensor& mean_t,
                   Tensor& var_t) {
  double count = static_cast<double>(l.n * l.spatial);
  std::vector<double> mean = kernels::batch_norm_channel_sums(x).to_vector<double>();
  if (sync) {
    mean.push_back(count);
    sync->all_reduce_sum(mean);
    count = mean.back();
    CREW_CHECK(count > 0, "batch_norm: training needs a non-empty batch over all ranks, got ", count,
               " elements per channel");
    mean.pop_back();
  }
  for (double& m : mean) m /= count;
  mean_t = channel_tensor(mean, x.place());
  std::vector<double> var = kernels::batch_norm_channel_sq_dev(x, mean_t).to_vector<double>();
  if (sync) sync->all_reduce_sum(var);
  for (double& v : var) v /= count;
  var_t = channel_tensor(var, x.place());
  return count;
}

// grads: x, weight, bias. Training backpropagates through the batch statistics; with a sync
// through those of every rank's batch, so the input gradient sums every rank's upstream
// gradient. Weight and bias gradients stay this process's sums (DataParallel averages them).
std::vector<Tensor> backward(const Tensor& g, const Tensor& x, const Layout& l, const Saved& s, bool training,
                             BatchNormStatsSync* sync, const std::vector<bool>& needs) {
  auto [sum_g, sum_gx] = kernels::batch_norm_grad_sums(g, x, s.mean, s.invstd);
  std::vector<Tensor> grads(3);
  if (needs[1]) grads[1] = sum_gx.to(x.dtype());
  if (needs[2]) grads[2] = sum_g.to(x.dtype());
  if (needs[0]) {
    if (training && sync) {
      std::vector<double> buf = sum_g.to_vector<double>();
      const std::vector<double> gx = sum_gx.to_vector<double>();
      buf.insert(buf.end(), gx.begin(), gx.end());
      sync->all_reduce_sum(buf);
      sum_g = channel_tensor(std::vector<double>(buf.begin(), buf.begin() + l.c), x.place());
      sum_gx = channel_tensor(std::vector<double>(buf.begin() + l.c, buf.end()), x.place());
    }
    grads[0] =
        kernels::batch_norm_input_grad(g, x, s.mean, s.invstd, s.scale, sum_g, sum_gx, s.count, training);
  }
  return grads;
}

void check_channel_tensor(const Tensor& t, int64_t c, DType dtype, const char* what) {
  if (!t.defined()) return;
  CREW_CHECK(t.numel() == c && t.dtype() == dtype, "batch_norm: ", what, " ", shape_str(t.shape()), " ",
             dtype_name(t.dtype()), " does not match ", c, " channels of ", dtype_name(dtype));
}

// channels: the dtype of the running statistics, weight and bias (x's, or float32 for a
// bfloat16 x).
Layout check_inputs(const Tensor& x, const Tensor& running_mean, const Tensor& running_var,
                    const Tensor& weight, const Tensor& bias, bool training, bool synced, DType channels) {
  if (channels == x.dtype()) kernels::check_floating(x, "batch_norm");
  CREW_CHECK(x.dim() >= 2, "batch_norm: input must be [N, C, ...], got shape ", shape_str(x.shape()));
  Layout l{x.size(0), x.size(1), 1};
  for (int64_t d = 2; d < x.dim(); ++d) l.spatial *= x.size(d);
  CREW_CHECK(running_mean.defined() && running_var.defined(), "batch_norm: running statistics are undefined");
  check_channel_tensor(running_mean, l.c, channels, "running_mean");
  check_channel_tensor(running_var, l.c, channels, "running_var");
  check_channel_tensor(weight, l.c, channels, "weight");
  check_channel_tensor(bias, l.c, channels, "bias");
  // Synced, one rank's share may be empty: the global count is checked after its all_reduce.
  if (training && !synced) CREW_CHECK(l.n * l.spatial > 0, "batch_norm: training needs a non-empty batch");
  return l;
}

// Training without a sync, float32: oneDNN's primitives (crew/tensor/kernels/batch_norm.h),
// which keep a blocked x blocked; the running statistics follow the batch's as below.
Tensor batch_norm_onednn(const Tensor& x, Tensor& running_mean, Tensor& running_var, const Tensor& weight,
                         const Tensor& bias, double momentum, double epsilon) {
  kernels::BatchNormStats stats;
  Tensor y = kernels::batch_norm_forward(x, weight, bias, epsilon, stats);
  kernels::batch_norm_update_running(running_mean, running_var, stats.mean.to(DType::FLOAT64),
                                     stats.variance.to(DType::FLOAT64), momentum);
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
  auto low = [](const Tensor& t) { return t.defined() && is_low_precision(t.dtype()); };
  if (low(x) || low(weight) || low(bias)) {
    // Mixed precision (autocast or an O2 model): the statistics and parameters in float32,
    // recorded casts so that 16-bit leaves get 16-bit gradients.
    auto up = [&low](const Tensor& t) { return low(t) ? cast(t, DType::FLOAT32) : t; };
    const Tensor w32 = up(weight), b32 = up(bias);
    if (x.dtype() == DType::BFLOAT16 && training && sync == nullptr && kernels::batch_norm_supported(x)) {
      check_inputs(x, running_mean, running_var, w32, b32, true, false, DType::FLOAT32);
      return batch_norm_onednn(x, running_mean, running_var, w32, b32, momentum, epsilon);
    }
    if (x.dtype() == DType::BFLOAT16 && !training && kernels::batch_norm_supported(x) &&
        !autograd::should_record({&x, &w32, &b32})) {
      // Inference (eval mode, use_global_stats): bfloat16 in and out on oneDNN, no float32 copy.
      check_inputs(x, running_mean, running_var, w32, b32, false, false, DType::FLOAT32);
      return kernels::batch_norm_inference(x, running_mean, running_var, w32, b32, epsilon);
    }
    return batch_norm(up(x), running_mean, running_var, w32, b32, training, momentum, epsilon,
                      std::move(sync));
  }
  const Layout l =
      check_inputs(x, running_mean, running_var, weight, bias, training, sync != nullptr, x.dtype());
  // SyncBatchNorm keeps the loops even alone: one process and N ranks compute alike.
  if (training && sync == nullptr && kernels::batch_norm_supported(x)) {
    return batch_norm_onednn(x, running_mean, running_var, weight, bias, momentum, epsilon);
  }
  Saved s;
  s.count = static_cast<double>(l.n * l.spatial);
  std::vector<double> var;
  if (training) {
    Tensor var_t;
    s.count = batch_stats(x, l, sync.get(), s.mean, var_t);
    kernels::batch_norm_update_running(running_mean, running_var, s.mean, var_t, momentum);
    var = var_t.to_vector<double>();
  } else {
    s.mean = running_mean.to(DType::FLOAT64);
    var = running_var.to_vector<double>();
  }
  std::vector<double> invstd(l.c);
  for (int64_t ch = 0; ch < l.c; ++ch) invstd[ch] = 1.0 / std::sqrt(var[ch] + epsilon);
  s.invstd = channel_tensor(invstd, x.place());
  s.scale = weight.defined() ? weight.to(DType::FLOAT64) : Tensor::ones({l.c}, DType::FLOAT64, x.place());
  Tensor y = kernels::batch_norm_normalize(x, s.mean, s.invstd, s.scale, bias);
  if (!training) sync = nullptr;  // inference never communicates
  if (autograd::should_record({&x, &weight, &bias})) {
    autograd::record(y, "batch_norm", {x, weight, bias},
                     [x, l, s, training, sync](const Tensor& g, const std::vector<bool>& needs) {
                       return backward(g, x, l, s, training, sync.get(), needs);
                     },
                     {x});  // the weight's values are in s.scale
  }
  return y;
}

}  // namespace crew::nn::functional
