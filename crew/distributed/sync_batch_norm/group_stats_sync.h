#pragma once
// GroupStatsSync: the BatchNormStatsSync of SyncBatchNorm, a blocking SUM all_reduce of
// float64 values over a group (null = the default group, looked up at each call, so a layer
// converted before init_parallel_env synchronises once it has run). Before
// init_parallel_env, or in a world of one process, it leaves the values alone: local
// statistics, exactly BatchNorm2D's. The all_reduce waits at most the group's timeout.
#include <cstdint>
#include <memory>
#include <vector>

#include "crew/distributed/parallel/parallel.h"
#include "crew/nn/batch_norm_sync.h"

namespace crew::dist {

class GroupStatsSync final : public nn::BatchNormStatsSync {
 public:
  explicit GroupStatsSync(std::shared_ptr<Group> group = nullptr) : group_(std::move(group)) {}

  // StateError on a rank that is not a member of the given group.
  void all_reduce_sum(std::vector<double>& values) override;
  // Null for the default group.
  const std::shared_ptr<Group>& group() const { return group_; }

 private:
  std::shared_ptr<Group> group_;
};

}  // namespace crew::dist
