#pragma once
// Node rendezvous: the launchers of a multi-node job meet in the store node 0's launcher
// hosts, agree on the membership (and so the world size and each node's rank offset) before
// any worker starts, and tell each other when their pod finished or failed.
//
// Keys, all under "crew.launch/<job_id>/<generation>/":
//   node/<r>   NodeClaim::encode():   "<nproc> <host> pid <pid> #<nonce>"
//   done/<r>   "1" once node r's workers all completed
//   failed     NodeFailure::encode(): "<node> <exit code> <message>", the job's first failure
//   alive/<r>  node r's heartbeat counter
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "crew/distributed/store/store.h"

namespace crew::launch {

// What a launcher registers for its node: the worker count and address, and who it is.
struct NodeClaim {
  int nproc = 0;
  std::string host;
  int pid = 0;
  uint32_t nonce = 0;  // tells apart two launchers that claim one rank from one pid number

  // "<nproc> <host> pid <pid> #<nonce>".
  std::string encode() const;
  // nullopt unless `text` has that form (nproc >= 1, a host without spaces).
  static std::optional<NodeClaim> decode(const std::string& text);
  bool operator==(const NodeClaim&) const = default;
};

// A node's failure as recorded for the whole job: the node, the exit code every launcher
// exits with, and what happened.
struct NodeFailure {
  int node = 0;
  int exit_code = 1;
  std::string message;  // may contain spaces

  // "<node> <exit code> <message>".
  std::string encode() const;
  // nullopt unless `text` is "<node> <exit code> <message>" with two decimal numbers >= 0.
  static std::optional<NodeFailure> decode(const std::string& text);
  bool operator==(const NodeFailure&) const = default;
};

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
  // Records the job's first failure, as this node's (kept if another node failed first).
  void mark_failed(int exit_code, const std::string& message);
  // The failure some node recorded, if any. A record that does not decode is still a
  // failure: node -1, exit code 1, the raw record in the message.
  std::optional<NodeFailure> failure();
  // Bumps this node's heartbeat counter.
  void heartbeat();
  // Node r's heartbeat counter (0 before its first beat).
  int64_t heartbeats(int r);
  // Whether a launcher has claimed this node's rank in this generation.
  bool claimed();
  // Node ranks whose heartbeat has not moved for `stale` (tracked between calls).
  std::vector<int> silent_nodes(std::chrono::milliseconds stale);

 private:
  std::string key(const std::string& name) const;
  // Claims node/<node_rank>; a rank claimed by another launcher fails the job.
  void claim(const std::string& host, int nproc);
  void wait_for_nodes(std::chrono::milliseconds timeout, const std::function<bool()>& interrupted);
  Membership read_membership();

  dist::Store& store_;
  std::string prefix_;
  int nnodes_;
  int node_rank_;
  std::vector<int64_t> last_beat_;
  std::vector<std::chrono::steady_clock::time_point> last_change_;
};

}  // namespace crew::launch
