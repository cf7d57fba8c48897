#pragma once
// The environment each worker starts with: the launcher's own, plus the worker's WorkerEnv
// (crew/core/worker_env.h, shared with spawn): its ParallelEnv as crew's and Paddle's
// variables and the few variables only a starter sets (docs/environment.md, docs/launch.md).
#include <string>
#include <vector>

#include "crew/core/parallel_env.h"
#include "crew/core/worker_env.h"
#include "crew/launch/devices.h"

namespace crew::launch {

// What every worker of one generation of the job shares.
struct JobLayout {
  std::string job_id = "default";
  std::string token;        // CREW_JOB_TOKEN ("" = none)
  std::string master_host;  // the store the launcher hosts
  int master_port = 0;
  // This node's address as the other nodes reach it (--host, else the one routing to the
  // master); multi-node workers get it as CREW_HOST, the address Gloo binds.
  std::string node_host;
  // The CPUs this node's launcher may use; pinned workers get them as CREW_COMM_CPUS, where
  // their transport threads may run (crew/core/comm_affinity.h).
  std::vector<int> node_cpus;
  int nnodes = 1;
  int node_rank = 0;
  int world_size = 1;
  int rank_offset = 0;  // global rank of this node's local rank 0 (node-major)
  int restart_count = 0;
  DeviceKind device_kind = DeviceKind::CPU;
  std::vector<std::string> endpoints;  // one "HOST:PORT" per global rank (PADDLE_TRAINER_ENDPOINTS)
  std::string log_dir;                 // absolute
};

// The parallel environment of the worker in `slot`.
ParallelEnv worker_parallel_env(const JobLayout& job, const WorkerSlot& slot, int local_world_size);

// Everything the launcher tells the worker in `slot`: worker_parallel_env(...), the store it
// hosts, the slot's thread count, PADDLE_LOG_DIR, PYTHONUNBUFFERED, CREW_COMM_CPUS (pinned
// workers) and CREW_HOST (on several nodes).
WorkerEnv worker_env(const JobLayout& job, const WorkerSlot& slot, int local_world_size);

// `base` with worker_env(...) applied (crew::worker_environment).
std::vector<std::string> worker_environment(const std::vector<std::string>& base, const JobLayout& job,
                                            const WorkerSlot& slot, int local_world_size);

}  // namespace crew::launch
