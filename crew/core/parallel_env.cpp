#include "crew/core/parallel_env.h"

#include <sstream>

#include "crew/core/check.h"
#include "crew/core/env.h"

namespace crew {
namespace {

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream is(text);
  while (std::getline(is, item, sep)) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

int int_var(const char* name, int fallback) { return static_cast<int>(env::get_int(name, fallback)); }

// First set variable among names, as an int.
bool first_int(std::initializer_list<const char*> names, int* out) {
  for (const char* n : names) {
    if (env::get(n)) {
      *out = int_var(n, *out);
      return true;
    }
  }
  return false;
}

}  // namespace

void parse_endpoint(const std::string& endpoint, std::string* host, int* port, const char* what) {
  std::string h;
  std::string p;
  if (!endpoint.empty() && endpoint[0] == '[') {
    size_t close = endpoint.find(']');
    CREW_CHECK(close != std::string::npos && close + 1 < endpoint.size() && endpoint[close + 1] == ':',
               what, "='", endpoint, "' is not HOST:PORT");
    h = endpoint.substr(1, close - 1);
    p = endpoint.substr(close + 2);
  } else {
    size_t colon = endpoint.rfind(':');
    CREW_CHECK(colon != std::string::npos && colon > 0, what, "='", endpoint, "' is not HOST:PORT");
    h = endpoint.substr(0, colon);
    p = endpoint.substr(colon + 1);
  }
  int value = -1;
  try {
    size_t used = 0;
    value = std::stoi(p, &used);
    if (used != p.size()) value = -1;
  } catch (const std::logic_error&) {
    value = -1;
  }
  CREW_CHECK(value >= 0 && value <= 65535, what, "='", endpoint, "': port '", p, "' is not in 0..65535");
  *host = h;
  *port = value;
}

ParallelEnv ParallelEnv::from_env() {
  ParallelEnv e;
  // Rank and world size, by convention.
  if (env::get("CREW_RANK") || env::get("CREW_WORLD_SIZE")) {
    e.source = "crew";
    e.rank = int_var("CREW_RANK", 0);
    e.world_size = int_var("CREW_WORLD_SIZE", 1);
    e.local_rank = int_var("CREW_LOCAL_RANK", e.rank);
    e.local_world_size = int_var("CREW_LOCAL_WORLD_SIZE", e.world_size);
  } else if (env::get("PADDLE_TRAINER_ID") || env::get("PADDLE_TRAINERS_NUM")) {
    e.source = "paddle";
    e.rank = int_var("PADDLE_TRAINER_ID", 0);
    e.world_size = int_var("PADDLE_TRAINERS_NUM", 1);
    e.local_rank = e.rank;
    first_int({"PADDLE_LOCAL_RANK", "PADDLE_RANK_IN_NODE"}, &e.local_rank);
    e.local_world_size = int_var("PADDLE_LOCAL_SIZE", e.world_size);
  } else if (env::get("RANK") && env::get("WORLD_SIZE")) {
    e.source = "torchrun";
    e.rank = int_var("RANK", 0);
    e.world_size = int_var("WORLD_SIZE", 1);
    e.local_rank = int_var("LOCAL_RANK", e.rank);
    e.local_world_size = int_var("LOCAL_WORLD_SIZE", e.world_size);
  } else if (env::get("OMPI_COMM_WORLD_RANK")) {
    e.source = "mpi";
    e.rank = int_var("OMPI_COMM_WORLD_RANK", 0);
    e.world_size = int_var("OMPI_COMM_WORLD_SIZE", 1);
    e.local_rank = int_var("OMPI_COMM_WORLD_LOCAL_RANK", e.rank);
    e.local_world_size = int_var("OMPI_COMM_WORLD_LOCAL_SIZE", e.world_size);
  } else if (env::get("SLURM_PROCID") && env::get("SLURM_NTASKS")) {
    e.source = "slurm";
    e.rank = int_var("SLURM_PROCID", 0);
    e.world_size = int_var("SLURM_NTASKS", 1);
    e.local_rank = int_var("SLURM_LOCALID", e.rank);
    e.local_world_size = e.world_size;
    if (auto per_node = env::get("SLURM_NTASKS_PER_NODE")) {
      try {
        e.local_world_size = std::stoi(*per_node);
      } catch (const std::logic_error&) {
      }
    }
  }
  CREW_CHECK(e.world_size >= 1, "parallel environment (", e.source, "): world size must be >= 1, got ",
             e.world_size);
  CREW_CHECK(e.rank >= 0 && e.rank < e.world_size, "parallel environment (", e.source, "): rank ", e.rank,
             " is out of range for world size ", e.world_size);
  CREW_CHECK(e.local_rank >= 0, "parallel environment (", e.source, "): local rank ", e.local_rank,
             " must not be negative");

  e.nnodes = int_var("CREW_NNODES", int_var("PADDLE_NNODES", 1));
  e.node_rank = int_var("CREW_NODE_RANK", int_var("GROUP_RANK", 0));

  // Device id: crew's, then Paddle's FLAGS_selected_gpus / FLAGS_selected_cpus (first entry).
  e.device_id = e.local_rank;
  if (env::get("CREW_DEVICE_ID")) {
    e.device_id = int_var("CREW_DEVICE_ID", e.local_rank);
  } else {
    for (const char* n : {"FLAGS_selected_gpus", "FLAGS_selected_cpus"}) {
      if (auto v = env::get(n)) {
        auto ids = split(*v, ',');
        if (!ids.empty()) {
          try {
            e.device_id = std::stoi(ids[0]);
          } catch (const std::logic_error&) {
            CREW_THROW(ValueError, "environment variable ", n, "='", *v, "' is not a device id list");
          }
        }
        break;
      }
    }
  }

  // Master endpoint.
  if (auto m = env::get("CREW_MASTER")) {
    parse_endpoint(*m, &e.master_addr, &e.master_port, "CREW_MASTER");
  } else if (auto pm = env::get("PADDLE_MASTER")) {
    parse_endpoint(*pm, &e.master_addr, &e.master_port, "PADDLE_MASTER");
  } else if (env::get("MASTER_ADDR") && env::get("MASTER_PORT")) {
    e.master_addr = *env::get("MASTER_ADDR");
    e.master_port = int_var("MASTER_PORT", 0);
  }
  if (auto eps = env::get("PADDLE_TRAINER_ENDPOINTS")) {
    e.trainer_endpoints = split(*eps, ',');
    if (!e.has_master() && !e.trainer_endpoints.empty()) {
      parse_endpoint(e.trainer_endpoints[0], &e.master_addr, &e.master_port, "PADDLE_TRAINER_ENDPOINTS");
    }
  }
  e.job_id = env::get_string("CREW_JOB_ID", env::get_string("PADDLE_JOB_ID", "default"));
  e.job_token = env::get_string("CREW_JOB_TOKEN", "");
  e.restart_count = int_var("CREW_RESTART_COUNT", 0);
  return e;
}

}  // namespace crew
