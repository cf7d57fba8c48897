#include "crew/launch/rejoin.h"

#include <thread>

#include "crew/core/check.h"
#include "crew/core/timer.h"
#include "crew/launch/node_rendezvous.h"

namespace crew::launch {
namespace {

std::string generation_key(const std::string& job_id) { return "crew.launch/" + job_id + "/generation"; }

// Whether node r's heartbeat moves within `stale` (polled every 100 ms).
bool heartbeat_moves(NodeRendezvous& rdzv, int r, std::chrono::milliseconds stale) {
  const int64_t first = rdzv.heartbeats(r);
  Deadline deadline(stale);
  while (!deadline.expired()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (rdzv.heartbeats(r) != first) return true;
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
  NodeRendezvous rdzv(store, job_id, current, nnodes, node_rank);
  if (!rdzv.claimed()) {
    return {current, current == 0 ? "" : str_cat("joining the running job at generation ", current)};
  }
  if (heartbeat_moves(rdzv, node_rank, stale)) return {current, ""};
  const std::string why = str_cat("node ", node_rank, "'s launcher was started again (its previous launcher stopped "
                                  "in generation ", current, ")");
  rdzv.mark_failed(1, why);
  return {current + 1, why + "; rejoining the job at generation " + std::to_string(current + 1)};
}

}  // namespace crew::launch
