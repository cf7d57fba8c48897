#pragma once
// HierProcessGroup: a ProcessGroup for groups that span hosts with several ranks on each
// (backend "hier"), composed of three sub-groups:
//   intra    the ranks of this host over shared memory (shm; a group of one if alone),
//   leaders  the lowest rank of every host over Gloo (only on leaders, only with >1 host),
//   all      every rank over Gloo.
// all_reduce is hierarchical: reduce onto the host's leader through shared memory, all_reduce
// among the leaders through Gloo, broadcast from the leader through shared memory; so only
// one rank per host moves bytes across hosts. The other collectives go to `all` unchanged.
//
//   auto pg = create_hier_process_group(store, rank, world, ProcessGroupOptions{});
//   pg->all_reduce(grad, ReduceOp::AVG)->wait();
//
// Hosts come from host_id() (CREW_HOST_ID overrides it, so tests simulate hosts on one
// machine). Every op runs on one queue, in issue order, under one sequence number. Each phase
// is bounded by the group timeout (so an all_reduce waits at most three timeouts). A failure
// in any phase (a dead rank, a timeout) destroys this rank's sub-groups, so the ranks that
// wait on it elsewhere in the hierarchy fail at once too instead of waiting for their timeout;
// the group is then unusable, as with the other backends.
#include <memory>

#include "crew/distributed/process_group/process_group.h"
#include "crew/distributed/store/store.h"

namespace crew::dist {

// Creates this rank's hierarchical group. Throws BackendUnavailableError on every rank when
// some host could not set up its shared memory (the ranks agree through the store first),
// CommError / TimeoutError when a sub-group's rendezvous fails.
std::shared_ptr<ProcessGroup> create_hier_process_group(const std::shared_ptr<Store>& store, int rank,
                                                        int size, const ProcessGroupOptions& options);

// Registers create_hier_process_group as backend "hier".
void register_hier_backend();

}  // namespace crew::dist
