#include "crew/launch/worker_env.h"

#include <algorithm>

#include "crew/core/spawn_process.h"

namespace crew::launch {
namespace {

bool has_entry(const std::vector<std::string>& env, const std::string& key) {
  const std::string prefix = key + "=";
  return std::any_of(env.begin(), env.end(), [&](const std::string& e) {
    return e.size() > prefix.size() && e.compare(0, prefix.size(), prefix) == 0;
  });
}

}  // namespace

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

std::vector<std::string> worker_environment(const std::vector<std::string>& base, const JobLayout& job,
                                            const WorkerSlot& slot, int local_world_size) {
  std::vector<std::string> env = base;
  apply_env(worker_parallel_env(job, slot, local_world_size).to_env(), &env);
  auto set = [&](const std::string& k, const std::string& v) { dist::set_env_entry(&env, k, v); };
  set("CREW_STORE_HOSTED", "1");
  if (!has_entry(base, "CREW_NUM_THREADS")) set("CREW_NUM_THREADS", std::to_string(slot.num_threads));
  if (!has_entry(base, "OMP_NUM_THREADS")) set("OMP_NUM_THREADS", std::to_string(slot.num_threads));
  if (!job.log_dir.empty()) set("PADDLE_LOG_DIR", job.log_dir);
  if (!slot.cpus.empty() && !job.node_cpus.empty() && !has_entry(base, "CREW_COMM_CPUS")) {
    std::string cpus;
    for (int c : job.node_cpus) cpus += (cpus.empty() ? "" : ",") + std::to_string(c);
    set("CREW_COMM_CPUS", cpus);
  }
  // Gloo would otherwise bind what this host's name resolves to, which on a multi-homed host
  // (or one whose name maps to 127.0.1.1) is not the address the other nodes can reach.
  if (job.nnodes > 1 && !job.node_host.empty() && !has_entry(base, "CREW_HOST")) set("CREW_HOST", job.node_host);
  return env;
}

}  // namespace crew::launch
