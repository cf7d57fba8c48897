#pragma once
// The configuration check every rank runs at init_parallel_env, through the job's store,
// before any process group exists: all ranks must agree on the world size, and each rank
// number must be claimed by exactly one process. A mistake (two processes started as rank 1,
// one rank told world size 3 and the others 4) fails every rank that arrived with a
// ValueError naming both values and both processes, instead of a rendezvous that hangs until
// the store timeout; ranks that never arrive give a TimeoutError naming them.
//
//   detail::check_world(*root, env, std::chrono::seconds(30));
//
// Keys, under the caller's (per-init) prefix: rdzv/world = "<world> <rank> <process>",
// rdzv/rank/<r> = "<process>", rdzv/error = the first failure, rdzv/error_seen = a counter.
// <process> is "<hostname> pid <pid> #<nonce>", unique even for equal pids in containers.
#include <chrono>
#include <string>

#include "crew/core/parallel_env.h"

namespace crew::dist {

class Store;

namespace detail {

// Claims env.rank, checks env.world_size against the first rank's, and waits up to `timeout`
// for every rank to claim its number. Throws ValueError (bad configuration, on every rank
// that arrived) or TimeoutError (ranks missing).
void check_world(Store& store, const ParallelEnv& env, std::chrono::milliseconds timeout);

// This process as rdzv/rank/<r> records it.
std::string process_identity();

}  // namespace detail
}  // namespace crew::dist
