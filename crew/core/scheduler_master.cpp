#include "crew/core/scheduler_master.h"

#include "crew/core/env.h"
#include "crew/core/parallel_env.h"

namespace crew {

std::string first_slurm_host(const std::string& nodelist) {
  // The first entry: up to a comma outside brackets.
  int depth = 0;
  size_t end = 0;
  for (; end < nodelist.size(); ++end) {
    const char c = nodelist[end];
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (c == ',' && depth == 0) break;
  }
  const std::string entry = nodelist.substr(0, end);
  const size_t open = entry.find('[');
  if (open == std::string::npos) return entry;
  const size_t close = entry.find(']', open);
  if (close == std::string::npos) return entry;  // malformed: let name resolution report it
  // The first number of the range list, zero padding kept: "07-09,12" -> "07".
  const std::string ranges = entry.substr(open + 1, close - open - 1);
  size_t stop = ranges.find_first_of("-,");
  const std::string first = ranges.substr(0, stop);
  return entry.substr(0, open) + first + entry.substr(close + 1);
}

int derived_port(const std::string& job_key) {
  // FNV-1a: stable across processes and builds (std::hash is not guaranteed to be).
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : job_key) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return 20000 + static_cast<int>(h % 20000);
}

namespace {

// Whether a Slurm step runs on one node: its node count (the step's, else the job's), else a
// node list naming one plain host.
bool slurm_step_on_one_node(const std::string& nodelist) {
  for (const char* var : {"SLURM_STEP_NUM_NODES", "SLURM_NNODES", "SLURM_JOB_NUM_NODES"}) {
    if (auto n = env::get(var)) return *n == "1";
  }
  return nodelist.find_first_of(",[") == std::string::npos;
}

}  // namespace

void master_from_scheduler(ParallelEnv* e) {
  if (e->has_master()) return;
  if (e->source == "slurm") {
    auto list = env::get("SLURM_STEP_NODELIST");
    if (!list) list = env::get("SLURM_JOB_NODELIST");
    if (!list) list = env::get("SLURM_NODELIST");
    auto job = env::get("SLURM_JOB_ID");
    if (!list || !job) return;
    // A one-node step meets on loopback: its store is then unreachable from other hosts.
    e->master_addr = slurm_step_on_one_node(*list) ? "127.0.0.1" : first_slurm_host(*list);
    e->master_port = derived_port("slurm:" + *job + "." + env::get_string("SLURM_STEP_ID", "0"));
  } else if (e->source == "mpi") {
    const bool one_host = e->local_world_size == e->world_size;
    auto job = env::get("OMPI_MCA_ess_base_jobid");
    if (!job) job = env::get("PMIX_NAMESPACE");
    if (!one_host || !job) return;
    e->master_addr = "127.0.0.1";
    e->master_port = derived_port("mpi:" + *job);
  }
}

}  // namespace crew
