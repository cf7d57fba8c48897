#include "crew/distributed/sync_batch_norm/group_stats_sync.h"

#include <cstring>

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
  Tensor values = Tensor::empty({n}, DType::FLOAT64);
  std::memcpy(values.raw_data(), data, static_cast<size_t>(n) * sizeof(double));
  all_reduce(values, ReduceOp::SUM, group.get());
  std::memcpy(data, values.raw_data(), static_cast<size_t>(n) * sizeof(double));
}

}  // namespace crew::dist
