#pragma once
// Where threads that only move bytes may run. `crew launch` pins each rank to its share of
// the cores (compute stays on its cache, ranks do not steal each other's cores); a transport
// thread pinned there too (Gloo's event loop) must wait for the rank's own busy thread to
// yield its core at every hop: on 2 cores a Gloo all_reduce took 3-4 ms pinned against
// 0.3-1 ms unpinned. The launcher lists the node's CPUs in CREW_COMM_CPUS; a thread created
// inside a CommAffinityScope may run on any of them.
//
//   { CommAffinityScope wide;  auto device = ::gloo::transport::tcp::CreateDevice(attr); }
#include <vector>

namespace crew {

class CommAffinityScope {
 public:
  // Widens the calling thread's affinity to CREW_COMM_CPUS (comma-separated CPU ids) while
  // alive; nothing when the variable is unset, malformed or names no CPU this process has.
  CommAffinityScope();
  ~CommAffinityScope();  // restores the thread's previous affinity
  CommAffinityScope(const CommAffinityScope&) = delete;
  CommAffinityScope& operator=(const CommAffinityScope&) = delete;

  bool widened() const { return !saved_.empty(); }

 private:
  std::vector<int> saved_;  // the previous affinity; empty = unchanged
};

// The CPUs the calling thread may run on (sched_getaffinity); empty if that fails.
std::vector<int> this_thread_cpus();

// The CPUs in CREW_COMM_CPUS ("0,1,5"); empty when unset or malformed.
std::vector<int> comm_cpus_from_env();

}  // namespace crew
