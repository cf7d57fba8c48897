#pragma once
// BatchNormStatsSync: how batch_norm combines per-channel sums over the ranks of a data-parallel
// job (SyncBatchNorm). nn only defines the interface; crew/distributed implements it over a
// process group (crew/distributed/sync_batch_norm/sync_batch_norm.h), so nn stays below
// distributed.
//
//   struct Sum : crew::nn::BatchNormStatsSync {            // e.g. in a test: two "ranks"
//     void all_reduce_sum(std::vector<double>& values) override { ... }
//   };
//   bn->set_stats_sync(std::make_shared<Sum>());
//
// In training, batch_norm calls all_reduce_sum twice in forward ([count, sum] per channel,
// then the sum of squared deviations per channel) and once in backward ([sum g, sum g * xhat]
// per channel, only when the input needs a gradient). Every rank must make the same calls in
// the same order, as for any collective. Inference never calls it.
#include <vector>

namespace crew::nn {

struct BatchNormStatsSync {
  virtual ~BatchNormStatsSync() = default;
  // In place: values = the element-wise sum of every rank's values (all of one size).
  virtual void all_reduce_sum(std::vector<double>& values) = 0;
};

}  // namespace crew::nn
