#include "crew/launch/node_rendezvous.h"

#include <unistd.h>

#include <random>
#include <sstream>
#include <thread>

#include "crew/core/check.h"
#include "crew/core/timer.h"

namespace crew::launch {

NodeRendezvous::NodeRendezvous(dist::Store& store, std::string job_id, int generation, int nnodes,
                               int node_rank)
    : store_(store),
      prefix_("crew.launch/" + job_id + "/" + std::to_string(generation) + "/"),
      nnodes_(nnodes),
      node_rank_(node_rank),
      last_beat_(static_cast<size_t>(nnodes), -1),
      last_change_(static_cast<size_t>(nnodes), std::chrono::steady_clock::now()) {}

std::string NodeRendezvous::key(const std::string& name) const { return prefix_ + name; }

Membership NodeRendezvous::join(const std::string& host, int nproc, std::chrono::milliseconds timeout,
                                const std::function<bool()>& interrupted) {
  // Claimed, not set: a second launcher started with the same --rank fails naming both, and
  // tells the others through `failed` so that nobody waits for the timeout.
  std::random_device rd;
  const std::string entry = str_cat(nproc, " ", host, " pid ", ::getpid(), " #", rd());
  const std::string mine = key("node/" + std::to_string(node_rank_));
  auto held = store_.compare_set(mine, {}, std::vector<uint8_t>(entry.begin(), entry.end()));
  if (std::string(held.begin(), held.end()) != entry) {
    std::istringstream is(std::string(held.begin(), held.end()));
    int their_nproc = 0;
    std::string their_host, word, their_pid;
    is >> their_nproc >> their_host >> word >> their_pid;
    const std::string message = str_cat(
        "launch (node ", node_rank_, "): node rank ", node_rank_, " is claimed twice: by the launcher on ",
        their_host, " (pid ", their_pid, ", ", their_nproc, " workers) and by this one on ", host, " (pid ",
        ::getpid(), ", ", nproc, " workers); give each node its own --rank");
    mark_failed(str_cat(1, " ", message));
    CREW_THROW(ValueError, message);
  }
  std::vector<std::string> keys;
  for (int r = 0; r < nnodes_; ++r) keys.push_back(key("node/" + std::to_string(r)));
  // Polled rather than one blocking wait, so a signal to the launcher is seen at once.
  Deadline deadline(timeout);
  while (!store_.check(keys)) {
    if (auto f = failure()) {
      std::string why = f->substr(f->find(' ') + 1);  // "<node> <exit code> <message>"
      why = why.substr(why.find(' ') + 1);
      CREW_THROW(StateError, "launch (node ", node_rank_, "): the job failed before it started: ", why);
    }
    if (interrupted && interrupted()) {
      CREW_THROW(StateError, "launch (node ", node_rank_, "): interrupted while waiting for the other nodes");
    }
    if (deadline.expired()) {
      std::string missing;
      for (int r = 0; r < nnodes_; ++r) {
        if (!store_.check({keys[static_cast<size_t>(r)]}))
          missing += (missing.empty() ? "" : ", ") + std::to_string(r);
      }
      CREW_THROW(TimeoutError, "launch (node ", node_rank_, "): nodes [", missing, "] of ", nnodes_,
                 " never joined the job within ", timeout.count(), " ms");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  Membership m;
  for (int r = 0; r < nnodes_; ++r) {
    std::istringstream is(store_.get_string(keys[static_cast<size_t>(r)]));
    NodeInfo n;
    n.node_rank = r;
    is >> n.nproc >> n.host;
    CREW_CHECK_T(StoreError, n.nproc > 0 && !n.host.empty(), "launch: node ", r,
                 " registered a malformed entry");
    if (r < node_rank_) m.rank_offset += n.nproc;
    m.world_size += n.nproc;
    m.nodes.push_back(n);
  }
  return m;
}

void NodeRendezvous::mark_done() { store_.set(key("done/" + std::to_string(node_rank_)), "1"); }

bool NodeRendezvous::all_done() {
  std::vector<std::string> keys;
  for (int r = 0; r < nnodes_; ++r) keys.push_back(key("done/" + std::to_string(r)));
  return store_.check(keys);
}

void NodeRendezvous::mark_failed(const std::string& message) {
  store_.compare_set(key("failed"), {}, [&] {
    std::string v = std::to_string(node_rank_) + " " + message;
    return std::vector<uint8_t>(v.begin(), v.end());
  }());
}

std::optional<std::string> NodeRendezvous::failure() {
  if (!store_.check({key("failed")})) return std::nullopt;
  return store_.get_string(key("failed"));
}

void NodeRendezvous::heartbeat() { store_.add(key("alive/" + std::to_string(node_rank_)), 1); }

std::vector<int> NodeRendezvous::silent_nodes(std::chrono::milliseconds stale) {
  std::vector<int> out;
  const auto now = std::chrono::steady_clock::now();
  for (int r = 0; r < nnodes_; ++r) {
    if (r == node_rank_ || store_.check({key("done/" + std::to_string(r))})) continue;
    int64_t beat = store_.add(key("alive/" + std::to_string(r)), 0);
    if (beat != last_beat_[static_cast<size_t>(r)]) {
      last_beat_[static_cast<size_t>(r)] = beat;
      last_change_[static_cast<size_t>(r)] = now;
    } else if (now - last_change_[static_cast<size_t>(r)] > stale) {
      out.push_back(r);
    }
  }
  return out;
}

}  // namespace crew::launch
