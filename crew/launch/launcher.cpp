#include "crew/launch/launcher.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <random>

#include "crew/core/check.h"
#include "crew/core/parallel_env.h"
#include "crew/core/spawn_process.h"
#include "crew/core/timer.h"
#include "crew/launch/devices.h"
#include "crew/launch/group_reaper.h"
#include "crew/launch/job_store.h"
#include "crew/launch/launch_log.h"
#include "crew/launch/node_address.h"
#include "crew/launch/node_rendezvous.h"
#include "crew/launch/pod.h"
#include "crew/launch/worker_env.h"

namespace crew::launch {
namespace {

constexpr int kLogTailLines = 40;
constexpr std::chrono::milliseconds kStoreTimeout{std::chrono::seconds(30)};
constexpr std::chrono::milliseconds kSilentNodeTimeout{std::chrono::seconds(30)};
constexpr const char* kDashes = "--------------------------------------------------";

void make_dirs(const std::string& path) {
  std::string partial;
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = path.find('/', pos + 1);
    partial = path.substr(0, pos);
    if (partial.empty()) continue;
    if (::mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST) {
      CREW_THROW(IOError, errno_message("launch: cannot create log directory '" + partial + "'"));
    }
  }
}

std::string absolute(const std::string& path) {
  char buf[PATH_MAX];
  if (::realpath(path.c_str(), buf)) return buf;
  return path;
}

std::string pod_name() {
  std::random_device rd;
  std::string name;
  for (int i = 0; i < 6; ++i) name += static_cast<char>('a' + rd() % 26);
  return name;
}

void print_configuration(const LaunchOptions& o) {
  launch_info("-----------  Configuration  ----------------------");
  for (const auto& [key, value] : describe(o)) launch_info(key + ": " + value);
  launch_info(kDashes);
}

// "Container rank 1 (pid 42) failed: exit code 3" and the log tail between
// Paddle's markers.
void report_failure(const Pod& pod, const PodOutcome& out, const std::vector<std::string>& command) {
  std::string cmd;
  for (const auto& c : command) cmd += (cmd.empty() ? "" : " ") + c;
  launch_info("Pod failed");
  launch_error(str_cat("Container failed !!!\nContainer rank ", out.global_rank, " (local rank ",
                       out.local_rank, ", pid ", out.pid, ") failed: ", out.status.describe(),
                       "\n  cmd: ", cmd, "\n  log: ", pod.log_path(out.local_rank)));
  std::string text = "------------------------- ERROR LOG DETAIL -------------------------\n";
  text += pod.log_tail(out.local_rank, kLogTailLines);
  if (!text.empty() && text.back() != '\n') text += "\n";
  text += "------------------------- ERROR LOG DETAIL END ---------------------\n";
  write_all(2, text.data(), text.size());
}

struct Job {
  const LaunchOptions& options;
  DeviceInventory inventory;
  std::vector<WorkerSlot> slots;
  std::vector<std::string> command;
  std::string master_host;
  int master_port = 0;
  std::string node_host;
  std::unique_ptr<JobStore> store;
  std::unique_ptr<GroupReaper> reaper;
  std::string log_dir;
  std::string token;  // the store's job token (generated on node 0 of a multi-node job)
};

// A fresh secret: 128 bits from the OS, as 32 hex digits.
std::string generate_token() {
  std::random_device rd;
  static const char* kHex = "0123456789abcdef";
  std::string hex;
  for (int i = 0; i < 4; ++i) {
    uint32_t v = rd();
    for (int j = 0; j < 8; ++j) hex += kHex[(v >> (4 * j)) & 0xf];
  }
  return hex;
}

// Runs one generation; returns the exit status, or -1 to restart.
int run_generation(Job& job, int generation, int restarts_left, SignalPipe& signals) {
  const LaunchOptions& o = job.options;
  const int node_rank = std::max(0, o.rank);
  NodeRendezvous rdzv(job.store->store(), o.job_id, generation, o.nnodes, node_rank);
  Membership m = rdzv.join(job.node_host, static_cast<int>(job.slots.size()), o.rendezvous_timeout,
                           [&] { return signals.drain() != 0; });
  std::vector<std::string> hosts;
  std::vector<int> sizes;
  for (const auto& n : m.nodes) {
    hosts.push_back(n.host);
    sizes.push_back(n.nproc);
  }
  JobLayout layout;
  layout.job_id = o.job_id;
  layout.token = job.token;
  layout.master_host = job.master_host;
  layout.master_port = job.master_port;
  layout.nnodes = o.nnodes;
  layout.node_rank = node_rank;
  layout.world_size = m.world_size;
  layout.rank_offset = m.rank_offset;
  layout.restart_count = generation;
  layout.device_kind = job.inventory.kind;
  layout.endpoints = nominal_endpoints(hosts, sizes, job.master_port);
  layout.log_dir = job.log_dir;

  PodSpec spec;
  spec.command = job.command;
  spec.log_dir = job.log_dir;
  spec.log_overwrite = o.log_overwrite;
  spec.console = o.log_ranks;
  const auto base_env = dist::current_environment();
  for (const WorkerSlot& s : job.slots) {
    WorkerSpec w;
    w.local_rank = s.local_rank;
    w.global_rank = m.rank_offset + s.local_rank;
    w.env = worker_environment(base_env, layout, s, static_cast<int>(job.slots.size()));
    w.cpus = s.cpus;
    spec.workers.push_back(std::move(w));
  }
  const std::string name = pod_name();
  Pod pod(spec, job.reaper.get());
  launch_info(str_cat("Run Pod: ", name, ", replicas ", job.slots.size(), ", status ready"));
  pod.start();
  launch_info(str_cat("Watching Pod: ", name, ", replicas ", job.slots.size(), ", status running"));
  const auto pids = pod.pids();
  for (size_t i = 0; i < job.slots.size(); ++i) {
    std::string cpus;
    for (int c : job.slots[i].cpus) cpus += (cpus.empty() ? "" : ",") + std::to_string(c);
    launch_log(LogLevel::DEBUG,
               str_cat("worker rank ", m.rank_offset + static_cast<int>(i), " pid ", pids[i], " device ",
                       job.slots[i].device_id, " cpus [", cpus, "] threads ", job.slots[i].num_threads,
                       " log ", pod.log_path(static_cast<int>(i))));
  }

  // Another node's failure (or silence) stops this node's pod too.
  Stopwatch since_beat;
  std::optional<NodeFailure> peer_failure;
  auto abort = [&]() -> bool {
    if (o.nnodes == 1) return false;
    try {
      if (since_beat.elapsed() > std::chrono::milliseconds(500)) {
        since_beat.reset();
        rdzv.heartbeat();
        for (int r : rdzv.silent_nodes(kSilentNodeTimeout)) {
          rdzv.mark_failed(
              1, str_cat("node ", r, " stopped responding for ", kSilentNodeTimeout.count(), " ms"));
        }
      }
      if (auto f = rdzv.failure()) peer_failure = *f;
    } catch (const Error& e) {
      peer_failure = NodeFailure{0, 1, str_cat("the store of node 0 is gone (", e.what(), ")")};
    }
    return peer_failure.has_value();
  };

  PodOutcome out = pod.watch(signals, abort);
  int code = 0;
  switch (out.state) {
    case PodState::COMPLETED:
      launch_info("Pod completed");
      if (o.nnodes > 1) {
        rdzv.mark_done();
        // Node 0 serves the store: it stays until every node finished or one
        // failed.
        while (node_rank == 0 && !rdzv.all_done() && !abort() && !signals.drain()) {
          ::usleep(20000);
        }
        if (peer_failure) launch_error("the job failed on another node: " + peer_failure->message);
        if (int sig = signals.terminating_signal()) return 128 + sig;
      }
      return peer_failure ? 1 : 0;
    case PodState::INTERRUPTED:
      launch_info(str_cat("Terminating with signal ", out.signal));
      pod.stop(o.grace_period, &signals, out.signal == SIGHUP ? SIGTERM : out.signal);
      launch_info(str_cat("Exit with signal ", out.signal));
      return 128 + out.signal;
    case PodState::FAILED:
      report_failure(pod, out, job.command);
      code = out.status.shell_code();
      if (o.nnodes > 1) {
        try {
          rdzv.mark_failed(
              code, str_cat("rank ", out.global_rank, " on node ", node_rank, ": ", out.status.describe()));
        } catch (const Error& e) {
          launch_warning(str_cat("could not tell the other nodes: ", e.what()));
        }
      }
      break;
    case PodState::ABORTED: {
      launch_error("stopping this node's workers: the job failed on another node: " + peer_failure->message);
      code = peer_failure->exit_code;
      if (code == 0) code = 1;
      break;
    }
  }
  pod.stop(o.grace_period);
  if (restarts_left > 0) {
    launch_warning(str_cat("Restarting the job (restart ", generation + 1, " of ", o.max_restart,
                           ", CREW_RESTART_COUNT=", generation + 1, ")"));
    return -1;
  }
  return code;
}

}  // namespace

int run_launch(const LaunchOptions& o) {
  set_launch_log_level(parse_log_level(o.log_level));
  print_configuration(o);
  ::signal(SIGPIPE,
           SIG_IGN);  // a vanished console or helper must not kill the launcher
  Job job{o, {}, {}, {}, "", 0, "", nullptr, nullptr, "", o.token};
  try {
    job.command.push_back(dist::resolve_program(o.program));
  } catch (const SpawnError& e) {
    launch_error(e.what());
    return 127;
  }
  job.command.insert(job.command.end(), o.program_args.begin(), o.program_args.end());
  try {
    job.inventory = detect_devices();
    job.slots = plan_workers(job.inventory, o.devices, o.nproc_per_node, o.cpu_affinity);
    make_dirs(o.log_dir);
    job.log_dir = absolute(o.log_dir);
    const int node_rank = std::max(0, o.rank);
    job.master_host = "127.0.0.1";
    if (!o.master.empty()) parse_endpoint(o.master, &job.master_host, &job.master_port, "--master");
    if (o.nnodes == 1 && !is_loopback(job.master_host)) {
      // A single-node job's store is reached by local workers only: never
      // expose it.
      launch_warning(str_cat("a single-node job serves its store on 127.0.0.1 only (not on ", job.master_host,
                             " of --master)"));
      job.master_host = "127.0.0.1";
    }
    if (o.nnodes > 1 && job.token.empty()) {
      // The store of a multi-node job listens beyond this host: it admits only
      // the job.
      CREW_CHECK(node_rank == 0, "launch (node ", node_rank,
                 "): a multi-node job's store requires the job token "
                 "that node 0's launcher prints; pass --token TOKEN or set "
                 "CREW_JOB_TOKEN");
      job.token = generate_token();
      launch_info(str_cat("Job token: ", job.token, " (pass --token ", job.token,
                          " or CREW_JOB_TOKEN to the launchers of the other nodes)"));
    }
    job.node_host = !o.host.empty() ? o.host : local_address_towards(job.master_host);
    if (o.nnodes > 1 && !is_loopback(job.master_host)) {
      CREW_CHECK(!is_loopback(job.node_host), "launch: node ", node_rank, " would announce loopback address ",
                 job.node_host, " to a multi-node job; pass --host");
    }
    job.reaper = std::make_unique<GroupReaper>();  // before the store: it
                                                   // inherits no socket
    if (node_rank == 0) {
      job.store = JobStore::serve(job.master_host, job.master_port, job.token, kStoreTimeout);
      job.master_port = job.store->port();
    } else {
      job.store = JobStore::connect(job.master_host, job.master_port, job.token, o.rendezvous_timeout);
    }
    launch_info(str_cat("Job: ", o.job_id, ", mode collective, replicas ", job.slots.size(), "[", o.nnodes,
                        " node", o.nnodes > 1 ? "s" : "", "], devices ", to_string(job.inventory.kind),
                        ", store ", job.master_host, ":", job.master_port,
                        node_rank == 0 ? " (served by this launcher)" : ""));
    SignalPipe signals;
    int code = -1;
    for (int generation = 0; code < 0; ++generation) {
      code = run_generation(job, generation, o.max_restart - generation, signals);
    }
    launch_info(str_cat("Exit code ", code));
    return code;
  } catch (const Error& e) {
    launch_error(e.what());
    launch_info("Exit code 1");
    return 1;
  }
}

}  // namespace crew::launch
