#pragma once
// The two all_reduce schedules of the hier backend (internal).
//
// leader:  intra reduce onto local rank 0 -> Gloo all_reduce among the leaders -> intra
//          broadcast. Any host layout; one rank per host moves bytes across hosts.
// split:   intra reduce_scatter (local rank i gets slice i of L, reduced over its host) ->
//          Gloo all_reduce of slice i among the local-rank-i ranks of every host -> intra
//          all_gather. Needs every host to run the same number L of ranks; every rank moves
//          1/L of the message across hosts and reduces 1/L of it, so L processes share the
//          cross-host work. Used from split_min_bytes on (CREW_HIER_SPLIT_BYTES).
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "crew/distributed/process_group/process_group.h"

namespace crew::dist::detail {

// Messages from this size on take the split schedule (when the layout allows it).
inline constexpr size_t kDefaultHierSplitMinBytes = size_t{64} << 10;

// Runs one phase: `what` and `sub_group` name it in errors; `start` issues the sub-group op.
using HierPhase = std::function<void(const char* what, const std::string& sub_group,
                                     const std::function<std::shared_ptr<Work>()>& start)>;

struct HierSubGroups {
  ProcessGroup* intra = nullptr;  // this host's ranks (local rank 0 = leader)
  ProcessGroup* inter = nullptr;  // the ranks of this local rank on every host; null: one host
  std::string intra_name;         // for errors: which group ranks the sub-group's ranks are
  std::string inter_name;
  bool split_ok = false;  // every host has the same number (> 1) of ranks
  size_t split_min_bytes = kDefaultHierSplitMinBytes;
};

// In place; `op` is the caller's op (AVG divides by group_size at the end). Each phase runs
// under `phase_timeout` and is waited for at once (async_op = false).
void hier_all_reduce(Tensor& tensor, ReduceOp op, int group_size, const HierSubGroups& groups,
                     const HierPhase& phase, std::chrono::milliseconds phase_timeout);

}  // namespace crew::dist::detail
