#pragma once
// BatchNorm2D: Paddle's nn.BatchNorm2D over x [N, C, H, W]. Training normalises with the
// batch statistics and updates the running ones (running = momentum * running +
// (1 - momentum) * batch, Paddle's convention); eval uses the running statistics.
// Parameters weight (= 1) and bias (= 0), buffers _mean (= 0) and _variance (= 1), all [C],
// under Paddle's names so state_dict keys match Paddle's ("bn._mean").
// set_stats_sync makes it a synchronised batch norm (what crew::SyncBatchNorm and
// SyncBatchNorm::convert_sync_batchnorm in crew/distributed/sync_batch_norm install): training
// then uses the statistics of every rank's batch (crew/nn/batch_norm_sync.h).
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "crew/nn/batch_norm_sync.h"
#include "crew/nn/layer.h"

namespace crew::nn {

class BatchNorm2D : public Layer {
 public:
  explicit BatchNorm2D(int64_t num_features, double momentum = 0.9, double epsilon = 1e-5);
  // x [N, C, H, W].
  Tensor forward(const Tensor& x) override;

  Tensor weight() const { return weight_; }
  Tensor bias() const { return bias_; }
  Tensor running_mean() const { return mean_; }
  Tensor running_variance() const { return variance_; }
  int64_t num_features() const { return num_features_; }
  double momentum() const { return momentum_; }
  double epsilon() const { return epsilon_; }

  // Null (the default): per-process statistics; else training synchronises them through it.
  void set_stats_sync(std::shared_ptr<BatchNormStatsSync> sync) { stats_sync_ = std::move(sync); }
  const std::shared_ptr<BatchNormStatsSync>& stats_sync() const { return stats_sync_; }

 protected:
  // For subclasses (SyncBatchNorm): their own name scope.
  BatchNorm2D(const std::string& name_scope, int64_t num_features, double momentum, double epsilon);
  // functional::batch_norm of x [N, C, ...] with this layer's state and sync (x unchecked).
  Tensor normalize(const Tensor& x);

 private:
  int64_t num_features_;
  double momentum_;
  double epsilon_;
  Tensor weight_, bias_, mean_, variance_;
  std::shared_ptr<BatchNormStatsSync> stats_sync_;
};

}  // namespace crew::nn
