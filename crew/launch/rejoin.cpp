#include "crew/launch/rejoin.h"

#include <thread>

#include "crew/core/check.h"
#include "crew/core/timer.h"
#include "crew/launch/node_rendezvous.h"

namespace crew::launch {
namespace {

std::string generation_key(const std::string& job_id) { return "crew.launch/" + job_id + "/generation"; }

std::string in_generation(const std::string& job_id, int generation, const std::string& name) {
  return str_cat("crew.launch/", job_id, "/", generation, "/", name);
}

// Whether the counter at `key` moves within `stale` (polled every 100 ms).
bool heartbeat_moves(dist::Store& store, const std::string& key, std::chrono::milliseconds stale) {
  const int64_t first = store.add(key, 0);
  Deadline deadline(stale);
  while (!deadline.expired()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (store.add(key, 0) != first) return true;
  }
  return false;
}

}  // namespace

void publish_generation(dist::Store& store, const std::string& job_id, int generation) {
  store.set(generation_key(job_id), std::to_string(generation));
}

JoinPoint rejoin_generation(dist::Store& store, const std::string& job_id, int nnodes, int node_rank,
                            std::chrono::milliseconds stale) {
  if (!store.check({generation_key(job_id)})) return {};
  const std::string text = store.get_string(generation_key(job_id));
  int current = 0;
  try {
    current = std::stoi(text);
  } catch (const std::exception&) {
    CREW_THROW(StoreError, "launch (node ", node_rank, "): unreadable generation '", text, "' in the job's store");
  }
  const std::string me = std::to_string(node_rank);
  if (!store.check({in_generation(job_id, current, "node/" + me)})) {
    return {current, current == 0 ? "" : str_cat("joining the running job at generation ", current)};
  }
  if (heartbeat_moves(store, in_generation(job_id, current, "alive/" + me), stale)) return {current, ""};
  const std::string why = str_cat("node ", node_rank, "'s launcher was started again (its previous launcher stopped "
                                  "in generation ", current, ")");
  NodeRendezvous(store, job_id, current, nnodes, node_rank).mark_failed(1, why);
  return {current + 1, why + "; rejoining the job at generation " + std::to_string(current + 1)};
}

}  // namespace crew::launch
