#include "crew/launch/worker_env.h"

namespace crew::launch {

ParallelEnv worker_parallel_env(const JobLayout& job, const WorkerSlot& slot, int local_world_size) {
  ParallelEnv w;
  w.source = "crew";
  w.rank = job.rank_offset + slot.local_rank;
  w.world_size = job.world_size;
  w.local_rank = slot.local_rank;
  w.local_world_size = local_world_size;
  w.node_rank = job.node_rank;
  w.nnodes = job.nnodes;
  w.device_id = job.device_kind == DeviceKind::GPU ? slot.device_index : slot.device_id;
  w.device_kind = to_string(job.device_kind);
  w.master_addr = job.master_host;
  w.master_port = job.master_port;
  w.job_id = job.job_id;
  w.job_token = job.token;
  w.restart_count = job.restart_count;
  w.trainer_endpoints = job.endpoints;
  return w;
}

WorkerEnv worker_env(const JobLayout& job, const WorkerSlot& slot, int local_world_size) {
  WorkerEnv w;
  w.parallel = worker_parallel_env(job, slot, local_world_size);
  w.store_hosted = true;
  w.num_threads = slot.num_threads;
  w.log_dir = job.log_dir;
  if (!slot.cpus.empty()) w.comm_cpus = job.node_cpus;
  if (job.nnodes > 1) w.host = job.node_host;
  // A worker's stdout is a pipe or a terminal the launcher reads: crew programs line-buffer
  // it themselves (crew/core/worker_stdio.h); ask Python to as well.
  w.python_unbuffered = true;
  return w;
}

std::vector<std::string> worker_environment(const std::vector<std::string>& base, const JobLayout& job,
                                            const WorkerSlot& slot, int local_world_size) {
  return crew::worker_environment(base, worker_env(job, slot, local_world_size));
}

}  // namespace crew::launch
