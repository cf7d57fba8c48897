#pragma once
// A node's launcher that starts while its job already runs: its previous launcher died (the
// host rebooted, the process was killed) and was started again, by hand or by the
// scheduler. With --max_restart it rejoins the job instead of starting a generation of its
// own: node 0 publishes every generation it starts, and the returning launcher picks the one
// to join. Node 0 itself cannot come back this way (its launcher hosts the store).
//
// Key: "crew.launch/<job_id>/generation" = the newest generation node 0 started.
#include <chrono>
#include <string>

#include "crew/distributed/store/store.h"

namespace crew::launch {

// Node 0, at the start of each generation.
void publish_generation(dist::Store& store, const std::string& job_id, int generation);

struct JoinPoint {
  int generation = 0;
  std::string note;  // what happened, for the launcher's log ("" for a plain start)
};

// The generation node `node_rank` should join: 0 for a job that has not started; the
// published one when this node has not claimed it yet (the others wait for it there); the
// next one when a previous launcher of this node claimed it and its heartbeat has not moved
// for `stale` — that generation is then marked failed, naming this node, so the others
// restart into the next one too. A claim whose heartbeat moves belongs to a live launcher:
// the published generation is returned and the rendezvous reports the rank claimed twice.
JoinPoint rejoin_generation(dist::Store& store, const std::string& job_id, int nnodes, int node_rank,
                            std::chrono::milliseconds stale);

}  // namespace crew::launch
