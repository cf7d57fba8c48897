#include "crew/distributed/sync_batch_norm/group_stats_sync.h"

#include "crew/core/check.h"
#include "crew/distributed/collective/collective.h"

namespace crew::dist {

void GroupStatsSync::all_reduce_sum(std::vector<double>& values) {
  const auto n = static_cast<int64_t>(values.size());
  std::shared_ptr<Group> group = group_;
  if (!group) {
    if (!is_initialized()) return;  // before init, or a world of one: local statistics
    group = default_group();
  }
  CREW_CHECK_T(StateError, group->is_member(), "SyncBatchNorm all_reduce (rank ", get_rank(),
               "): this rank is not a member of group ", group->name());
  if (group->nranks() <= 1 || n == 0) return;
  Tensor sums = Tensor::from_vector(values, {n});
  all_reduce(sums, ReduceOp::SUM, group.get());
  values = sums.to_vector<double>();
}

}  // namespace crew::dist
