#include "crew/core/parallel_env.h"

#include <array>
#include <charconv>
#include <optional>
#include <sstream>
#include <string_view>

#include "crew/core/check.h"
#include "crew/core/env.h"
#include "crew/core/job_token.h"
#include "crew/core/scheduler_master.h"
#include "crew/core/spawn_process.h"

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

std::string join(const std::vector<std::string>& items) {
  std::string s;
  for (const auto& i : items) s += (s.empty() ? "" : ",") + i;
  return s;
}

int int_var(const char* name, int fallback) { return static_cast<int>(env::get_int(name, fallback)); }

// A count >= 1 at text[*pos...]; moves *pos past it.
std::optional<int> positive(std::string_view text, size_t* pos) {
  int value = 0;
  const auto [end, ec] = std::from_chars(text.data() + *pos, text.data() + text.size(), value);
  if (ec != std::errc() || value < 1) return std::nullopt;
  *pos = static_cast<size_t>(end - text.data());
  return value;
}

// One item of a Slurm task count list: "N" or "N(xM)" (M nodes with N tasks each).
std::optional<int> slurm_item(std::string_view item) {
  size_t pos = 0;
  const auto tasks = positive(item, &pos);
  if (!tasks || pos == item.size()) return tasks;
  if (item.substr(pos, 2) != "(x") return std::nullopt;
  pos += 2;
  if (!positive(item, &pos) || item.substr(pos) != ")") return std::nullopt;
  return tasks;
}

// SLURM_NTASKS_PER_NODE ("2", "2(x3)", "2(x2),1"): the first node's count. A value that is
// not such a list is an error: a silent fallback to the world size misplaces every rank.
int slurm_per_node(const char* name, int fallback) {
  const auto text = env::get(name);
  if (!text) return fallback;
  std::optional<int> first;
  std::string_view rest = *text;
  while (true) {
    const size_t comma = rest.find(',');
    const auto tasks = slurm_item(rest.substr(0, comma));
    CREW_CHECK(tasks.has_value(), "environment variable ", name, "='", *text,
               "' is not a Slurm task count list (such as 2, 2(x3) or 2(x2),1)");
    if (!first) first = tasks;
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return *first;
}

// Which of a convention's rank and world size variables must be set for it to apply.
enum class Needs { EITHER, BOTH, RANK };

// How one launcher names rank and world size; the first that applies in kConventions wins.
struct Convention {
  const char* source;
  Needs needs;
  const char* rank;
  const char* world_size;
  std::array<const char*, 2> local_rank;  // the first set wins; default: the rank
  const char* local_world_size;           // default: the world size
  int (*read_count)(const char* name, int fallback);
};

// clang-format off
constexpr Convention kConventions[] = {
  // source    needs          rank                    world size
  //           local rank (the first set)                    local world size              read by
  {"crew",     Needs::EITHER, "CREW_RANK",            "CREW_WORLD_SIZE",
               {"CREW_LOCAL_RANK", nullptr},                 "CREW_LOCAL_WORLD_SIZE",      int_var},
  {"paddle",   Needs::EITHER, "PADDLE_TRAINER_ID",    "PADDLE_TRAINERS_NUM",
               {"PADDLE_LOCAL_RANK", "PADDLE_RANK_IN_NODE"}, "PADDLE_LOCAL_SIZE",          int_var},
  {"torchrun", Needs::BOTH,   "RANK",                 "WORLD_SIZE",
               {"LOCAL_RANK", nullptr},                      "LOCAL_WORLD_SIZE",           int_var},
  {"mpi",      Needs::RANK,   "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
               {"OMPI_COMM_WORLD_LOCAL_RANK", nullptr},      "OMPI_COMM_WORLD_LOCAL_SIZE", int_var},
  {"slurm",    Needs::BOTH,   "SLURM_PROCID",         "SLURM_NTASKS",
               {"SLURM_LOCALID", nullptr},                   "SLURM_NTASKS_PER_NODE",      slurm_per_node},
};
// clang-format on

bool applies(const Convention& c) {
  const bool rank = env::get(c.rank).has_value();
  const bool world = env::get(c.world_size).has_value();
  switch (c.needs) {
    case Needs::EITHER:
      return rank || world;
    case Needs::BOTH:
      return rank && world;
    case Needs::RANK:
      return rank;
  }
  return false;
}

// Rank, world size and the local ones from the first convention that applies (none: rank 0 of 1).
void read_ranks(ParallelEnv* e) {
  for (const Convention& c : kConventions) {
    if (!applies(c)) continue;
    e->source = c.source;
    e->rank = int_var(c.rank, 0);
    e->world_size = int_var(c.world_size, 1);
    e->local_rank = e->rank;
    for (const char* n : c.local_rank) {
      if (n && env::get(n)) {
        e->local_rank = int_var(n, e->rank);
        break;
      }
    }
    e->local_world_size = c.read_count(c.local_world_size, e->world_size);
    return;
  }
}

void check_ranks(const ParallelEnv& e) {
  CREW_CHECK(e.world_size >= 1, "parallel environment (", e.source, "): world size must be >= 1, got ",
             e.world_size);
  CREW_CHECK(e.rank >= 0 && e.rank < e.world_size, "parallel environment (", e.source, "): rank ", e.rank,
             " is out of range for world size ", e.world_size);
  CREW_CHECK(e.local_rank >= 0, "parallel environment (", e.source, "): local rank ", e.local_rank,
             " must not be negative");
}

// crew's device id, then Paddle's FLAGS_selected_gpus / FLAGS_selected_cpus (first entry).
int read_device_id(int local_rank) {
  if (env::get("CREW_DEVICE_ID")) return int_var("CREW_DEVICE_ID", local_rank);
  for (const char* n : {"FLAGS_selected_gpus", "FLAGS_selected_cpus"}) {
    auto v = env::get(n);
    if (!v) continue;
    auto ids = split(*v, ',');
    if (ids.empty()) return local_rank;
    try {
      return std::stoi(ids[0]);
    } catch (const std::logic_error&) {
      CREW_THROW(ValueError, "environment variable ", n, "='", *v, "' is not a device id list");
    }
  }
  return local_rank;
}

// The store's endpoint: crew's, Paddle's, torchrun's, else the first trainer endpoint.
void read_master(ParallelEnv* e) {
  if (auto m = env::get("CREW_MASTER")) {
    parse_endpoint(*m, &e->master_addr, &e->master_port, "CREW_MASTER");
  } else if (auto pm = env::get("PADDLE_MASTER")) {
    parse_endpoint(*pm, &e->master_addr, &e->master_port, "PADDLE_MASTER");
  } else if (env::get("MASTER_ADDR") && env::get("MASTER_PORT")) {
    e->master_addr = *env::get("MASTER_ADDR");
    e->master_port = int_var("MASTER_PORT", 0);
  }
  if (auto eps = env::get("PADDLE_TRAINER_ENDPOINTS")) {
    e->trainer_endpoints = split(*eps, ',');
    if (!e->has_master() && !e->trainer_endpoints.empty()) {
      parse_endpoint(e->trainer_endpoints[0], &e->master_addr, &e->master_port, "PADDLE_TRAINER_ENDPOINTS");
    }
  }
}

}  // namespace

void parse_endpoint(const std::string& endpoint, std::string* host, int* port, const char* what) {
  std::string h;
  std::string p;
  if (!endpoint.empty() && endpoint[0] == '[') {
    size_t close = endpoint.find(']');
    CREW_CHECK(close != std::string::npos && close + 1 < endpoint.size() && endpoint[close + 1] == ':', what,
               "='", endpoint, "' is not HOST:PORT");
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
  read_ranks(&e);
  check_ranks(e);
  e.nnodes = int_var("CREW_NNODES", int_var("PADDLE_NNODES", 1));
  e.node_rank = int_var("CREW_NODE_RANK", int_var("GROUP_RANK", 0));
  e.device_id = read_device_id(e.local_rank);
  e.device_kind = env::get_string("CREW_DEVICE_KIND", "cpu");
  read_master(&e);
  master_from_scheduler(&e);
  e.job_id = env::get_string("CREW_JOB_ID", env::get_string("PADDLE_JOB_ID", "default"));
  e.job_token = env::get_string("CREW_JOB_TOKEN", "");
  if (auto file = env::get("CREW_JOB_TOKEN_FILE"); file && e.job_token.empty())
    e.job_token = read_job_token_file(*file, "CREW_JOB_TOKEN_FILE");
  e.insecure_store = env::get_bool("CREW_INSECURE_STORE", false);
  e.restart_count = int_var("CREW_RESTART_COUNT", 0);
  return e;
}

std::vector<EnvVar> ParallelEnv::to_env() const {
  const std::string r = std::to_string(rank);
  const std::string world = std::to_string(world_size);
  const std::string local = std::to_string(local_rank);
  const std::string local_size = std::to_string(local_world_size);
  const std::string nodes = std::to_string(nnodes);
  const std::string device = std::to_string(device_id);
  const std::string master = has_master() ? master_endpoint() : "";
  const size_t me = static_cast<size_t>(rank);
  std::vector<EnvVar> vars = {
      {"CREW_RANK", r},
      {"CREW_WORLD_SIZE", world},
      {"CREW_LOCAL_RANK", local},
      {"CREW_LOCAL_WORLD_SIZE", local_size},
      {"CREW_NODE_RANK", std::to_string(node_rank)},
      {"CREW_NNODES", nodes},
      {"CREW_DEVICE_ID", device},
      {"CREW_DEVICE_KIND", device_kind},
      {"CREW_MASTER", master},
      {"CREW_JOB_ID", job_id},
      {"CREW_JOB_TOKEN", job_token},
      {"CREW_INSECURE_STORE", insecure_store ? "1" : ""},
      {"CREW_RESTART_COUNT", std::to_string(restart_count)},
      {"PADDLE_TRAINER_ID", r},
      {"PADDLE_GLOBAL_RANK", r},
      {"PADDLE_TRAINERS_NUM", world},
      {"PADDLE_GLOBAL_SIZE", world},
      {"PADDLE_LOCAL_RANK", local},
      {"PADDLE_RANK_IN_NODE", local},
      {"PADDLE_LOCAL_SIZE", local_size},
      {"PADDLE_NNODES", nodes},
      {"PADDLE_MASTER", master},
      {"PADDLE_JOB_ID", job_id},
      {"PADDLE_TRAINER_ENDPOINTS", join(trainer_endpoints)},
      {"PADDLE_CURRENT_ENDPOINT", me < trainer_endpoints.size() ? trainer_endpoints[me] : ""},
  };
  if (device_kind == "gpu") {
    vars.push_back({"FLAGS_selected_gpus", device});
  } else {
    vars.push_back({"FLAGS_selected_cpus", device});
    vars.push_back({"PADDLE_DISTRI_BACKEND", "gloo"});
  }
  return vars;
}

void apply_env(const std::vector<EnvVar>& vars, std::vector<std::string>* env) {
  for (const EnvVar& v : vars) {
    if (v.value.empty()) {
      dist::unset_env_entry(env, v.name);
    } else {
      dist::set_env_entry(env, v.name, v.value);
    }
  }
}

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

}  // namespace crew
