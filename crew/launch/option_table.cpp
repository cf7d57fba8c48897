#include "crew/launch/option_table.h"

#include <cctype>

#include "crew/core/check.h"
#include "crew/core/env.h"
#include "crew/core/logging.h"
#include "crew/core/parallel_env.h"

namespace crew::launch {
namespace {

using Spec = LaunchOptionSpec;
using Kind = LaunchOptionSpec::Kind;
using InWorker = OptionAlias::InWorker;
using Millis = std::chrono::milliseconds;

int parse_int(const std::string& text, const std::string& what) {
  try {
    size_t used = 0;
    const int v = std::stoi(text, &used);
    if (used == text.size()) return v;
  } catch (const std::logic_error&) {
  }
  CREW_THROW(ValueError, what, "='", text, "' is not an integer");
}

bool parse_bool(const std::string& text, const std::string& what) {
  for (const char* yes : {"1", "true", "True", "on", "yes"}) {
    if (text == yes) return true;
  }
  for (const char* no : {"0", "false", "False", "off", "no"}) {
    if (text == no) return false;
  }
  CREW_THROW(ValueError, what, "='", text, "': expected 1/0, true/false, on/off or yes/no");
}

std::string or_none(const std::string& s) { return s.empty() ? "None" : s; }

// Row functions for a field of one type; `Check` (nullptr: none) validates it.
template <int LaunchOptions::*F, void (*Check)(const LaunchOptions&, const std::string&)>
void set_int(LaunchOptions& o, const std::string& text, const std::string& what) {
  o.*F = parse_int(text, what);
  if constexpr (Check != nullptr) Check(o, what);
}
template <int LaunchOptions::*F>
std::string show_int(const LaunchOptions& o) {
  return std::to_string(o.*F);
}
template <Millis LaunchOptions::*F, void (*Check)(const LaunchOptions&, const std::string&)>
void set_duration(LaunchOptions& o, const std::string& text, const std::string& what) {
  o.*F = env::parse_duration(text, what.c_str());
  if constexpr (Check != nullptr) Check(o, what);
}
template <Millis LaunchOptions::*F>
std::string show_duration(const LaunchOptions& o) {
  return format_duration(o.*F);
}
template <std::string LaunchOptions::*F, void (*Check)(const LaunchOptions&, const std::string&)>
void set_text(LaunchOptions& o, const std::string& text, const std::string& what) {
  o.*F = text;
  if constexpr (Check != nullptr) Check(o, what);
}
template <std::string LaunchOptions::*F>
std::string show_text(const LaunchOptions& o) {
  return or_none(o.*F);
}
// An on/off-like choice stored as a bool: `yes` is the text for true, `no` for false.
template <bool LaunchOptions::*F, const char* Yes, const char* No>
void set_choice(LaunchOptions& o, const std::string& text, const std::string& what) {
  CREW_CHECK(text == Yes || text == No, what, "='", text, "': expected '", Yes, "' or '", No, "'");
  o.*F = text == Yes;
}
template <bool LaunchOptions::*F, const char* Yes, const char* No>
std::string show_choice(const LaunchOptions& o) {
  return o.*F ? Yes : No;
}

// The checks, one per option that has one; `what` names the flag or the variable.
void check_nproc(const LaunchOptions& o, const std::string& w) {
  CREW_CHECK(o.nproc_per_node == -1 || o.nproc_per_node >= 1, w, " must be >= 1, got ", o.nproc_per_node);
}
void check_nnodes(const LaunchOptions& o, const std::string& w) {
  CREW_CHECK(o.nnodes >= 1, w, " must be >= 1, got ", o.nnodes);
}
void check_rank(const LaunchOptions& o, const std::string& w) {
  CREW_CHECK(o.rank >= -1, w, " must be >= -1 (-1: 0 on one node), got ", o.rank);
}
void check_max_restart(const LaunchOptions& o, const std::string& w) {
  CREW_CHECK(o.max_restart >= 0, w, " must be >= 0, got ", o.max_restart);
}
void check_devices(const LaunchOptions& o, const std::string& w) {
  if (!o.devices.empty()) parse_id_list(o.devices, w.c_str());
}
void check_master(const LaunchOptions& o, const std::string& w) {
  std::string host;
  int port = 0;
  if (!o.master.empty()) parse_endpoint(o.master, &host, &port, w.c_str());
}
void check_log_dir(const LaunchOptions& o, const std::string& w) {
  CREW_CHECK(!o.log_dir.empty(), w, " must not be empty");
}
void check_log_level(const LaunchOptions& o, const std::string& w) {
  try {
    parse_log_level(o.log_level);
  } catch (const ValueError& e) {
    CREW_THROW(ValueError, w, ": ", e.what());
  }
}
void check_job_id(const LaunchOptions& o, const std::string& w) {
  CREW_CHECK(!o.job_id.empty() && o.job_id.find('/') == std::string::npos, w,
             " must be a non-empty name without '/', got '", o.job_id, "'");
}
void check_grace_period(const LaunchOptions& o, const std::string& w) {
  CREW_CHECK(o.grace_period.count() >= 0, w, " must not be negative, got ", o.grace_period.count(), " ms");
}
void check_restart_backoff(const LaunchOptions& o, const std::string& w) {
  CREW_CHECK(o.restart_backoff.count() >= 0, w, " must not be negative, got ", o.restart_backoff.count(),
             " ms");
}
void check_rendezvous_timeout(const LaunchOptions& o, const std::string& w) {
  CREW_CHECK(o.rendezvous_timeout.count() >= 0, w, " must not be negative, got ",
             o.rendezvous_timeout.count(), " ms");
}
void check_node_timeout(const LaunchOptions& o, const std::string& w) {
  CREW_CHECK(o.node_timeout.count() >= 1000, w, " must be at least 1s (heartbeats are 500 ms apart), got ",
             o.node_timeout.count(), " ms");
}

void set_log_overwrite(LaunchOptions& o, const std::string& text, const std::string& what) {
  o.log_overwrite = parse_bool(text, what);
}
std::string show_log_overwrite(const LaunchOptions& o) { return o.log_overwrite ? "True" : "False"; }
void set_log_ranks(LaunchOptions& o, const std::string& text, const std::string& what) {
  try {
    o.log_ranks = parse_console_ranks(text);
  } catch (const ValueError&) {
    CREW_THROW(ValueError, what, "='", text, "': expected 'all' or local ranks such as '0' or '0,3'");
  }
}
std::string show_log_ranks(const LaunchOptions& o) { return to_string(o.log_ranks); }
std::string show_nproc(const LaunchOptions& o) {
  return o.nproc_per_node < 0 ? "None" : std::to_string(o.nproc_per_node);
}

constexpr char kOn[] = "on";
constexpr char kOff[] = "off";
constexpr char kTty[] = "tty";
constexpr char kPipe[] = "pipe";

bool non_negative(const std::string& v) {
  try {
    return std::stoi(v) >= 0;
  } catch (const std::logic_error&) {
    return true;  // let set() name the bad value
  }
}

std::vector<Spec> make_table() {
  using O = LaunchOptions;
  // clang-format off
  return {
    {"devices", "--devices,--gpus", {{"PADDLE_DEVICES"}}, Kind::TEXT, 0,
     "device ids, e.g. 0,1,2 (CPU slots without a GPU); default: all visible",
     set_text<&O::devices, check_devices>, check_devices, show_text<&O::devices>},
    {"nproc_per_node", "--nproc_per_node,--nproc-per-node", {{"PADDLE_NPROC_PER_NODE"}}, Kind::INT, -1,
     "workers on this node (-1: one per device)",
     set_int<&O::nproc_per_node, check_nproc>, check_nproc, show_nproc},
    {"nnodes", "--nnodes", {{"PADDLE_NNODES", InWorker::WARN_AND_SKIP}}, Kind::INT, 1, "number of nodes",
     set_int<&O::nnodes, check_nnodes>, check_nnodes, show_int<&O::nnodes>},
    {"master", "--master", {{"PADDLE_MASTER", InWorker::WARN_AND_SKIP}}, Kind::TEXT, 0,
     "HOST:PORT where node 0's launcher serves the job's store (default: 127.0.0.1, a port the OS picks)",
     set_text<&O::master, check_master>, check_master, show_text<&O::master>},
    {"rank", "--rank,--node-rank,--node_rank",
     {{"PADDLE_RANK"}, {"PADDLE_TRAINER_ID", InWorker::WARN_AND_SKIP, non_negative}}, Kind::INT, -1,
     "this node's rank (needed with --nnodes > 1; -1: 0 on one node)",
     set_int<&O::rank, check_rank>, check_rank, show_int<&O::rank>},
    {"host", "--host", {{"POD_IP"}}, Kind::TEXT, 0,
     "this node's address as other nodes reach it (default: the one routing to the master)",
     set_text<&O::host, nullptr>, nullptr, show_text<&O::host>},
    {"job_id", "--job_id", {{"PADDLE_JOB_ID"}}, Kind::TEXT, 0, "job name",
     set_text<&O::job_id, check_job_id>, check_job_id, show_text<&O::job_id>},
    {"log_dir", "--log_dir", {{"PADDLE_LOG_DIR"}}, Kind::TEXT, 0, "directory for workerlog.N and envlog.N",
     set_text<&O::log_dir, check_log_dir>, check_log_dir, show_text<&O::log_dir>},
    {"log_level", "--log_level", {{"PADDLE_LOG_LEVEL"}}, Kind::TEXT, 0,
     "launcher log level: DEBUG, INFO, WARNING, ERROR",
     set_text<&O::log_level, check_log_level>, check_log_level, show_text<&O::log_level>},
    {"log_overwrite", "--log_overwrite", {{"PADDLE_LOG_OVERWRITE"}}, Kind::FLAG, 0,
     "truncate worker logs instead of appending", set_log_overwrite, nullptr, show_log_overwrite},
    {"log_ranks", "--log_ranks", {}, Kind::TEXT, 0,
     "local ranks the console shows: '0', 'all' or a list such as '0,3' (prefixed when more than one)",
     set_log_ranks, nullptr, show_log_ranks},
    {"max_restart", "--max_restart,--max-restarts,--max_restarts", {{"PADDLE_MAX_RESTART"}}, Kind::INT, 0,
     "restarts of the whole job after a failure",
     set_int<&O::max_restart, check_max_restart>, check_max_restart, show_int<&O::max_restart>},
    {"restart_backoff", "--restart_backoff", {}, Kind::DURATION, 0, "pause before each restart (0 allowed)",
     set_duration<&O::restart_backoff, check_restart_backoff>, check_restart_backoff, show_duration<&O::restart_backoff>},
    {"grace_period", "--grace_period", {}, Kind::DURATION, 0, "SIGTERM-to-SIGKILL grace for stopping workers",
     set_duration<&O::grace_period, check_grace_period>, check_grace_period, show_duration<&O::grace_period>},
    {"rendezvous_timeout", "--rendezvous_timeout", {}, Kind::DURATION, 0, "how long nodes wait for each other",
     set_duration<&O::rendezvous_timeout, check_rendezvous_timeout>, check_rendezvous_timeout, show_duration<&O::rendezvous_timeout>},
    {"node_timeout", "--node_timeout", {}, Kind::DURATION, 0,
     "how long a node may send no heartbeat before the job counts it as lost",
     set_duration<&O::node_timeout, check_node_timeout>, check_node_timeout, show_duration<&O::node_timeout>},
    {"cpu_affinity", "--cpu_affinity", {}, Kind::CHOICE, 0, "pin CPU workers to their share of the cores: on/off",
     set_choice<&O::cpu_affinity, kOn, kOff>, nullptr, show_choice<&O::cpu_affinity, kOn, kOff>},
    {"worker_stdio", "--worker_stdio", {}, Kind::CHOICE, 0,
     "workers' stdout/stderr: tty (a pseudo-terminal: live, line-buffered output) or pipe",
     set_choice<&O::worker_tty, kTty, kPipe>, nullptr, show_choice<&O::worker_tty, kTty, kPipe>},
    // The token is a secret: used, never echoed. Inside a worker CREW_JOB_TOKEN is the parent
    // job's, which a nested launch (a job of its own) does not use.
    {"token", "--token", {{"CREW_JOB_TOKEN", InWorker::SKIP}}, Kind::TEXT, 0,
     "shared secret given to workers as CREW_JOB_TOKEN (visible in ps: prefer --token-file or CREW_JOB_TOKEN)",
     set_text<&O::token, nullptr>, nullptr, nullptr},
  };
  // clang-format on
}

}  // namespace

const std::vector<LaunchOptionSpec>& launch_option_table() {
  static const std::vector<LaunchOptionSpec> table = make_table();
  return table;
}

std::string env_name(const LaunchOptionSpec& spec) {
  std::string name = "CREW_LAUNCH_";
  for (const char* c = spec.name; *c; ++c)
    name += static_cast<char>(std::toupper(static_cast<unsigned char>(*c)));
  return name;
}

std::string flag_name(const LaunchOptionSpec& spec) { return std::string("--") + spec.name; }

std::string format_duration(std::chrono::milliseconds d) {
  const long long ms = d.count();
  if (ms != 0 && ms % 60000 == 0) return std::to_string(ms / 60000) + "m";
  if (ms != 0 && ms % 1000 == 0) return std::to_string(ms / 1000) + "s";
  return std::to_string(ms) + "ms";
}

}  // namespace crew::launch
