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

std::string join(const std::vector<std::string>& items) {
  std::string s;
  for (const auto& i : items) s += (s.empty() ? "" : ",") + i;
  return s;
}

}  // namespace

std::vector<std::string> nominal_endpoints(const std::vector<std::string>& node_hosts,
                                           const std::vector<int>& node_sizes, int master_port) {
  std::vector<std::string> out;
  int rank = 0;
  for (size_t n = 0; n < node_hosts.size(); ++n) {
    for (int i = 0; i < node_sizes[n]; ++i, ++rank) {
      int port = master_port + 1 + rank;
      if (port > 65535) port = 1024 + (port - 65536);
      out.push_back(node_hosts[n] + ":" + std::to_string(port));
    }
  }
  return out;
}

std::vector<std::string> worker_environment(const std::vector<std::string>& base, const JobLayout& job,
                                            const WorkerSlot& slot, int local_world_size) {
  std::vector<std::string> env = base;
  auto set = [&](const std::string& k, const std::string& v) { dist::set_env_entry(&env, k, v); };
  const int rank = job.rank_offset + slot.local_rank;
  const std::string r = std::to_string(rank);
  const std::string world = std::to_string(job.world_size);
  const std::string local = std::to_string(slot.local_rank);
  const std::string local_size = std::to_string(local_world_size);

  set("CREW_RANK", r);
  set("CREW_WORLD_SIZE", world);
  set("CREW_LOCAL_RANK", local);
  set("CREW_LOCAL_WORLD_SIZE", local_size);
  set("CREW_NODE_RANK", std::to_string(job.node_rank));
  set("CREW_NNODES", std::to_string(job.nnodes));
  set("CREW_MASTER", job.master);
  set("CREW_STORE_HOSTED", "1");
  set("CREW_DEVICE_ID",
      std::to_string(job.device_kind == DeviceKind::GPU ? slot.device_index : slot.device_id));
  set("CREW_DEVICE_KIND", to_string(job.device_kind));
  set("CREW_JOB_ID", job.job_id);
  if (!job.token.empty()) set("CREW_JOB_TOKEN", job.token);
  set("CREW_RESTART_COUNT", std::to_string(job.restart_count));
  if (!has_entry(base, "CREW_NUM_THREADS")) set("CREW_NUM_THREADS", std::to_string(slot.num_threads));
  if (!has_entry(base, "OMP_NUM_THREADS")) set("OMP_NUM_THREADS", std::to_string(slot.num_threads));

  set("PADDLE_TRAINER_ID", r);
  set("PADDLE_GLOBAL_RANK", r);
  set("PADDLE_TRAINERS_NUM", world);
  set("PADDLE_GLOBAL_SIZE", world);
  set("PADDLE_LOCAL_RANK", local);
  set("PADDLE_RANK_IN_NODE", local);
  set("PADDLE_LOCAL_SIZE", local_size);
  set("PADDLE_NNODES", std::to_string(job.nnodes));
  set("PADDLE_MASTER", job.master);
  set("PADDLE_JOB_ID", job.job_id);
  if (!job.log_dir.empty()) set("PADDLE_LOG_DIR", job.log_dir);
  if (static_cast<size_t>(rank) < job.endpoints.size()) {
    set("PADDLE_CURRENT_ENDPOINT", job.endpoints[static_cast<size_t>(rank)]);
    set("PADDLE_TRAINER_ENDPOINTS", join(job.endpoints));
  }
  if (job.device_kind == DeviceKind::GPU) {
    set("FLAGS_selected_gpus", std::to_string(slot.device_index));
  } else {
    set("FLAGS_selected_cpus", std::to_string(slot.device_id));
    set("PADDLE_DISTRI_BACKEND", "gloo");
  }
  return env;
}

}  // namespace crew::launch
