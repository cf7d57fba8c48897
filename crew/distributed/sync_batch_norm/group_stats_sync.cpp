#include "crew/distributed/sync_batch_norm/group_stats_sync.h"

#include <algorithm>

#include "crew/core/check.h"
#include "crew/distributed/collective/collective.h"

namespace crew::dist {

void GroupStatsSync::all_reduce_sum(double* data, int64_t n) {
  std::shared_ptr<Group> group = group_;
  if (!group) {
    if (!is_initialized()) return;  // before init, or a world of one: local statistics
    group = default_group();
  }
  CREW_CHECK_T(StateError, group->is_member(), "SyncBatchNorm all_reduce (rank ", get_rank(),
               "): this rank is not a member of group ", group->name());
  if (group->nranks() <= 1 || n == 0) return;
  Tensor values = Tensor::from_bytes(data, {n}, DType::FLOAT64);
  all_reduce(values, ReduceOp::SUM, group.get());
  const std::vector<double> sums = values.to_vector<double>();
  std::copy(sums.begin(), sums.end(), data);
}

}  // namespace crew::dist
