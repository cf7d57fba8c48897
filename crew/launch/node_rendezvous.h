#pragma once
// Node rendezvous: the launchers of a multi-node job meet in the store node 0's launcher
// hosts, agree on the membership (and so the world size and each node's rank offset) before
// any worker starts, and tell each other when their pod finished or failed.
//
// Keys, all under "crew.launch/<job_id>/<generation>/": node/<r> = "<nproc> <host>",
// done/<r> = "1", failed = "<node> <message>", alive/<r> = heartbeat counter.
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "crew/distributed/store/store.h"

namespace crew::launch {

struct NodeInfo {
  int node_rank = 0;
  int nproc = 0;
  std::string host;
};

struct Membership {
  std::vector<NodeInfo> nodes;  // by node rank
  int world_size = 0;
  int rank_offset = 0;  // this node's first global rank (node-major)
};

class NodeRendezvous {
 public:
  NodeRendezvous(dist::Store& store, std::string job_id, int generation, int nnodes, int node_rank);

  // Registers this node and waits up to `timeout` for all nodes (TimeoutError naming the
  // nodes that never registered; StateError once `interrupted` returns true).
  Membership join(const std::string& host, int nproc, std::chrono::milliseconds timeout,
                  const std::function<bool()>& interrupted);
  // Records that this node's workers all completed.
  void mark_done();
  // True once every node marked done.
  bool all_done();
  // Records the job's first failure (kept if another node failed first).
  void mark_failed(const std::string& message);
  // The failure some node recorded, if any.
  std::optional<std::string> failure();
  // Bumps this node's heartbeat counter.
  void heartbeat();
  // Node ranks whose heartbeat has not moved for `stale` (tracked between calls).
  std::vector<int> silent_nodes(std::chrono::milliseconds stale);

 private:
  std::string key(const std::string& name) const;

  dist::Store& store_;
  std::string prefix_;
  int nnodes_;
  int node_rank_;
  std::vector<int64_t> last_beat_;
  std::vector<std::chrono::steady_clock::time_point> last_change_;
};

}  // namespace crew::launch
