#include "crew/distributed/sync_batch_norm/sync_batch_norm.h"

#include <functional>

#include "crew/core/check.h"
#include "crew/distributed/data_parallel/data_parallel.h"
#include "crew/distributed/sync_batch_norm/group_stats_sync.h"

namespace crew {
namespace {

void install_sync(nn::Layer& root, const std::shared_ptr<nn::BatchNormStatsSync>& sync) {
  root.apply([&](nn::Layer& layer) {
    if (auto* bn = dynamic_cast<nn::BatchNorm2D*>(&layer)) bn->set_stats_sync(sync);
    // DataParallel does not register the layer it wraps as a sublayer.
    if (auto* dp = dynamic_cast<DataParallel*>(&layer)) install_sync(dp->module(), sync);
  });
}

}  // namespace

SyncBatchNorm::SyncBatchNorm(int64_t num_features, double momentum, double epsilon,
                             std::shared_ptr<dist::Group> group)
    : nn::BatchNorm2D("sync_batch_norm", num_features, momentum, epsilon) {
  set_stats_sync(std::make_shared<dist::GroupStatsSync>(std::move(group)));
}

Tensor SyncBatchNorm::forward(const Tensor& x) {
  CREW_CHECK(x.dim() >= 2 && x.dim() <= 5 && x.size(1) == num_features(), full_name(),
             ": expected input [N, ", num_features(), ", ...] of 2 to 5 dimensions, got ",
             shape_str(x.shape()));
  return normalize(x);
}

std::shared_ptr<nn::Layer> SyncBatchNorm::convert_sync_batchnorm(std::shared_ptr<nn::Layer> layer,
                                                                 std::shared_ptr<dist::Group> group) {
  CREW_CHECK(layer != nullptr, "SyncBatchNorm.convert_sync_batchnorm: layer is null");
  install_sync(*layer, std::make_shared<dist::GroupStatsSync>(std::move(group)));
  return layer;
}

}  // namespace crew
