#include "crew/launch/options.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "crew/core/check.h"
#include "crew/core/env.h"
#include "crew/core/job_token.h"
#include "crew/core/logging.h"
#include "crew/core/parallel_env.h"

namespace crew::launch {
namespace {

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

int to_int(const std::string& text, const std::string& what) {
  try {
    size_t used = 0;
    int v = std::stoi(text, &used);
    if (used == text.size()) return v;
  } catch (const std::logic_error&) {
  }
  CREW_THROW(ValueError, what, "='", text, "' is not an integer");
}

}  // namespace

bool ConsoleRanks::shows(int local_rank) const {
  return all || std::binary_search(local_ranks.begin(), local_ranks.end(), local_rank);
}

std::string to_string(const ConsoleRanks& ranks) {
  if (ranks.all) return "all";
  std::string out;
  for (int r : ranks.local_ranks) {
    if (!out.empty()) out += ',';
    out += std::to_string(r);
  }
  return out;
}

ConsoleRanks parse_console_ranks(const std::string& text) {
  ConsoleRanks ranks;
  if (text == "all") {
    ranks.all = true;
    return ranks;
  }
  try {
    ranks.local_ranks = parse_id_list(text, "--log_ranks");
  } catch (const ValueError&) {
    CREW_THROW(ValueError, "--log_ranks='", text, "': expected 'all' or local ranks such as '0' or '0,3'");
  }
  std::sort(ranks.local_ranks.begin(), ranks.local_ranks.end());
  return ranks;
}

std::string read_token_file(const std::string& path) { return read_job_token_file(path, "--token-file"); }

std::vector<std::string> apply_environment(LaunchOptions* o, const std::set<std::string>& given) {
  std::vector<std::string> used;
  const bool inside_worker = env::get("CREW_RANK").has_value();
  // The value for option `name`: CREW_LAUNCH_<NAME>, then the Paddle names in order.
  auto lookup = [&](const std::string& name, std::initializer_list<const char*> paddle_names,
                    bool exported_to_workers = false) -> std::optional<std::string> {
    if (given.count(name)) return std::nullopt;
    std::string crew_name = "CREW_LAUNCH_" + upper(name);
    if (auto v = env::get(crew_name.c_str())) {
      used.push_back(crew_name + "=" + *v);
      return v;
    }
    for (const char* p : paddle_names) {
      if (auto v = env::get(p)) {
        if (exported_to_workers && inside_worker) {
          CREW_LOG(WARNING) << "launch: ignoring " << p << "=" << *v
                            << " (set by the launcher of the job this process belongs to)";
          continue;
        }
        used.push_back(std::string(p) + "=" + *v);
        return v;
      }
    }
    return std::nullopt;
  };
  if (auto v = lookup("devices", {"PADDLE_DEVICES"})) o->devices = *v;
  if (auto v = lookup("nproc_per_node", {"PADDLE_NPROC_PER_NODE"}))
    o->nproc_per_node = to_int(*v, "nproc_per_node");
  if (auto v = lookup("nnodes", {"PADDLE_NNODES"}, true)) o->nnodes = to_int(*v, "nnodes");
  if (auto v = lookup("master", {"PADDLE_MASTER"}, true)) o->master = *v;
  if (auto v = lookup("rank", {"PADDLE_RANK"})) {
    o->rank = to_int(*v, "rank");
  } else if (auto v = lookup("rank", {"PADDLE_TRAINER_ID"}, true)) {
    // Paddle: PADDLE_TRAINER_ID overrides the node rank only when it is >= 0.
    if (to_int(*v, "PADDLE_TRAINER_ID") >= 0) o->rank = to_int(*v, "PADDLE_TRAINER_ID");
  }
  if (auto v = lookup("log_dir", {"PADDLE_LOG_DIR"})) o->log_dir = *v;
  if (auto v = lookup("log_level", {"PADDLE_LOG_LEVEL"})) o->log_level = *v;
  if (auto v = lookup("log_overwrite", {"PADDLE_LOG_OVERWRITE"})) {
    o->log_overwrite = *v == "1" || *v == "true" || *v == "True" || *v == "on" || *v == "yes";
  }
  if (auto v = lookup("max_restart", {"PADDLE_MAX_RESTART"})) o->max_restart = to_int(*v, "max_restart");
  if (auto v = lookup("job_id", {"PADDLE_JOB_ID"})) o->job_id = *v;
  if (auto v = lookup("log_ranks", {})) o->log_ranks = parse_console_ranks(*v);
  if (auto v = lookup("host", {"POD_IP"})) o->host = *v;
  if (auto v = lookup("restart_backoff", {}))
    o->restart_backoff = env::parse_duration(*v, "CREW_LAUNCH_RESTART_BACKOFF");
  if (auto v = lookup("grace_period", {}))
    o->grace_period = env::parse_duration(*v, "CREW_LAUNCH_GRACE_PERIOD");
  if (auto v = lookup("node_timeout", {})) o->node_timeout = env::parse_duration(*v, "CREW_LAUNCH_NODE_TIMEOUT");
  // The token is a secret: used, never echoed. Inside a worker CREW_JOB_TOKEN is the parent
  // job's, which a nested launch (a job of its own) does not use.
  if (!given.count("token")) {
    if (auto v = env::get("CREW_LAUNCH_TOKEN")) {
      o->token = *v;
      used.push_back("CREW_LAUNCH_TOKEN=(hidden)");
    } else if (auto t = env::get("CREW_JOB_TOKEN"); t && !inside_worker) {
      o->token = *t;
      used.push_back("CREW_JOB_TOKEN=(hidden)");
    }
  }
  return used;
}

void validate(const LaunchOptions& o) {
  CREW_CHECK(!o.program.empty(),
             "no training program given (usage: crew launch [options] PROGRAM [ARGS...])");
  CREW_CHECK(o.nnodes >= 1, "--nnodes must be >= 1, got ", o.nnodes);
  CREW_CHECK(o.nproc_per_node == -1 || o.nproc_per_node >= 1, "--nproc_per_node must be >= 1, got ",
             o.nproc_per_node);
  CREW_CHECK(o.max_restart >= 0, "--max_restart must be >= 0, got ", o.max_restart);
  CREW_CHECK(o.grace_period.count() >= 0, "--grace_period must not be negative");
  CREW_CHECK(o.node_timeout.count() >= 1000, "--node_timeout must be at least 1s (heartbeats are 500 ms apart), got ",
             o.node_timeout.count(), " ms");
  CREW_CHECK(o.restart_backoff.count() >= 0, "--restart_backoff must not be negative, got ",
             o.restart_backoff.count(), " ms");
  CREW_CHECK(!o.log_dir.empty(), "--log_dir must not be empty");
  CREW_CHECK(!o.job_id.empty() && o.job_id.find('/') == std::string::npos,
             "--job_id must be a non-empty name without '/', got '", o.job_id, "'");
  parse_log_level(o.log_level);
  if (!o.devices.empty()) parse_id_list(o.devices, "--devices");
  if (!o.master.empty()) {
    std::string host;
    int port = 0;
    parse_endpoint(o.master, &host, &port, "--master");
  }
  if (o.nnodes > 1) {
    CREW_CHECK(!o.master.empty(), "--nnodes ", o.nnodes,
               " needs --master HOST:PORT (the address node 0's launcher serves the store on)");
    CREW_CHECK(o.rank >= 0 && o.rank < o.nnodes, "--rank must be in [0, ", o.nnodes, ") with --nnodes ",
               o.nnodes, ", got ", o.rank);
  } else {
    CREW_CHECK(o.rank <= 0, "--rank ", o.rank, " is out of range for a single node (--nnodes 1)");
  }
}

std::vector<std::pair<std::string, std::string>> describe(const LaunchOptions& o) {
  auto or_none = [](const std::string& s) { return s.empty() ? std::string("None") : s; };
  std::string args;
  for (const auto& a : o.program_args) args += (args.empty() ? "" : " ") + a;
  std::vector<std::pair<std::string, std::string>> d = {
      {"devices", or_none(o.devices)},
      {"nproc_per_node", o.nproc_per_node < 0 ? "None" : std::to_string(o.nproc_per_node)},
      {"nnodes", std::to_string(o.nnodes)},
      {"master", or_none(o.master)},
      {"rank", std::to_string(o.rank)},
      {"host", or_none(o.host)},
      {"job_id", o.job_id},
      {"log_dir", o.log_dir},
      {"log_level", o.log_level},
      {"log_overwrite", o.log_overwrite ? "True" : "False"},
      {"log_ranks", to_string(o.log_ranks)},
      {"max_restart", std::to_string(o.max_restart)},
      {"restart_backoff", str_cat(o.restart_backoff.count(), "ms")},
      {"grace_period", str_cat(o.grace_period.count(), "ms")},
      {"node_timeout", str_cat(o.node_timeout.count(), "ms")},
      {"cpu_affinity", o.cpu_affinity ? "on" : "off"},
      {"worker_stdio", o.worker_tty ? "tty" : "pipe"},
      {"run_mode", "collective"},
      {"training_script", o.program},
      {"training_script_args", args.empty() ? "[]" : "[" + args + "]"},
  };
  if (!o.interpreter_source.empty()) d.push_back({"python", o.program + " (" + o.interpreter_source + ")"});
  return d;
}

}  // namespace crew::launch
