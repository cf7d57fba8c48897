#pragma once
// The environment each worker starts with: the launcher's own, plus crew's and Paddle's
// variables describing the job (docs/environment.md, docs/launch.md).
#include <string>
#include <vector>

#include "crew/launch/devices.h"

namespace crew::launch {

// What every worker of one generation of the job shares.
struct JobLayout {
  std::string job_id = "default";
  std::string token;             // CREW_JOB_TOKEN ("" = none)
  std::string master;            // "HOST:PORT" of the store the launcher hosts
  int nnodes = 1;
  int node_rank = 0;
  int world_size = 1;
  int rank_offset = 0;           // global rank of this node's local rank 0 (node-major)
  int restart_count = 0;
  DeviceKind device_kind = DeviceKind::CPU;
  std::vector<std::string> endpoints;  // one "HOST:PORT" per global rank (PADDLE_TRAINER_ENDPOINTS)
  std::string log_dir;           // absolute
};

// Nominal per-rank endpoints for PADDLE_TRAINER_ENDPOINTS: host of each rank's node and
// master_port + 1 + global rank. crew's workers do not listen there (they meet through the
// store); Paddle programs that only print or split the list keep working.
std::vector<std::string> nominal_endpoints(const std::vector<std::string>& node_hosts,
                                           const std::vector<int>& node_sizes, int master_port);

// `base` plus the job's variables for `slot` (CREW_*, PADDLE_*, FLAGS_selected_*,
// CREW_NUM_THREADS / OMP_NUM_THREADS unless already set).
std::vector<std::string> worker_environment(const std::vector<std::string>& base, const JobLayout& job,
                                            const WorkerSlot& slot, int local_world_size);

}  // namespace crew::launch
