#include "crew/launch/launcher.h"

#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <random>

#include "crew/core/check.h"
#include "crew/core/job_token.h"
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
#include "crew/launch/rejoin.h"
#include "crew/launch/worker_env.h"

namespace crew::launch {
namespace {

constexpr int kLogTailLines = 40;
constexpr std::chrono::milliseconds kStoreTimeout{std::chrono::seconds(30)};
constexpr const char* kDashes = "--------------------------------------------------";

void make_dirs(const std::string& path) {
  std::string partial;
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = path.find('/', pos + 1);
    partial = path.substr(0, pos);
    if (partial.empty()) continue;
    // 0700: worker logs may hold secrets; a directory that exists keeps its mode.
    if (::mkdir(partial.c_str(), 0700) != 0 && errno != EEXIST) {
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

// "Container rank 1 (pid 42) failed: exit code 3" and the log tail between Paddle's markers.
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
  explicit Job(const LaunchOptions& o) : options(o), token(o.token) {}

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
  std::string token;  // the store's job token (generated on node 0 when none is given)
};

// This node's rank (--rank is -1 when not given, on one node).
int node_rank_of(const LaunchOptions& o) { return std::max(0, o.rank); }

// What every worker of this generation shares.
JobLayout job_layout(const Job& job, const Membership& m, int generation) {
  std::vector<std::string> hosts;
  std::vector<int> sizes;
  for (const auto& n : m.nodes) {
    hosts.push_back(n.host);
    sizes.push_back(n.nproc);
  }
  JobLayout layout;
  layout.job_id = job.options.job_id;
  layout.token = job.token;
  layout.master_host = job.master_host;
  layout.master_port = job.master_port;
  layout.node_host = job.node_host;
  layout.node_cpus = job.inventory.cpus;
  layout.nnodes = job.options.nnodes;
  layout.node_rank = node_rank_of(job.options);
  layout.world_size = m.world_size;
  layout.rank_offset = m.rank_offset;
  layout.restart_count = generation;
  layout.device_kind = job.inventory.kind;
  layout.endpoints = nominal_endpoints(hosts, sizes, job.master_port);
  layout.log_dir = job.log_dir;
  return layout;
}

// This node's workers for one generation: the command, the logs, each worker's environment.
PodSpec pod_spec(const Job& job, const Membership& m, int generation) {
  const JobLayout layout = job_layout(job, m, generation);
  PodSpec spec;
  spec.command = job.command;
  spec.log_dir = job.log_dir;
  // A restart appends to the logs (even with --log_overwrite), after a separating line.
  spec.log_overwrite = job.options.log_overwrite && generation == 0;
  if (generation > 0) {
    spec.log_header = str_cat("==== restart ", generation, " of ", job.options.max_restart, " (generation ",
                              generation, ") ====\n");
  }
  spec.console = job.options.log_ranks;
  spec.worker_tty = job.options.worker_tty;
  const auto base_env = dist::current_environment();
  for (const WorkerSlot& s : job.slots) {
    WorkerSpec w;
    w.local_rank = s.local_rank;
    w.global_rank = m.rank_offset + s.local_rank;
    w.env = worker_environment(base_env, layout, s, static_cast<int>(job.slots.size()));
    w.cpus = s.cpus;
    spec.workers.push_back(std::move(w));
  }
  return spec;
}

void start_pod(const Job& job, Pod& pod, const Membership& m) {
  const std::string name = pod_name();
  launch_info(str_cat("Run Pod: ", name, ", replicas ", job.slots.size(), ", status ready"));
  pod.start();
  launch_info(str_cat("Watching Pod: ", name, ", replicas ", job.slots.size(), ", status running"));
  const auto pids = pod.pids();
  for (size_t i = 0; i < job.slots.size(); ++i) {
    std::string cpus;
    for (int c : job.slots[i].cpus) {
      if (!cpus.empty()) cpus += ',';
      cpus += std::to_string(c);
    }
    launch_log(LogLevel::DEBUG,
               str_cat("worker rank ", m.rank_offset + static_cast<int>(i), " pid ", pids[i], " device ",
                       job.slots[i].device_id, " cpus [", cpus, "] threads ", job.slots[i].num_threads,
                       " log ", pod.log_path(static_cast<int>(i))));
  }
}

// While this node's pod runs: heartbeats to the other nodes, and whether one of them failed
// (or fell silent, or node 0's store is gone), which stops this node's pod too.
class PeerWatch {
 public:
  PeerWatch(NodeRendezvous& rdzv, const Membership& m, std::chrono::milliseconds node_timeout)
      : rdzv_(rdzv), nodes_(m.nodes), node_timeout_(node_timeout) {}

  // True once the job failed elsewhere; failure() then says how.
  bool failed() {
    if (nodes_.size() <= 1) return false;
    try {
      if (since_beat_.elapsed() > std::chrono::milliseconds(500)) {
        since_beat_.reset();
        rdzv_.heartbeat();
        for (int r : rdzv_.silent_nodes(node_timeout_)) rdzv_.mark_failed(1, lost_node(r));
      }
      if (auto f = rdzv_.failure()) failure_ = *f;
    } catch (const Error& e) {
      failure_ = NodeFailure{0, 1, str_cat("the store of node 0 is gone (", e.what(), ")")};
    }
    return failure_.has_value();
  }
  const std::optional<NodeFailure>& failure() const { return failure_; }

 private:
  // "node 1 (host 10.0.0.2, ranks 2-3) sent no heartbeat for 30000 ms (--node_timeout): ..."
  std::string lost_node(int r) const {
    int first = 0;
    for (int k = 0; k < r && k < static_cast<int>(nodes_.size()); ++k) first += nodes_[static_cast<size_t>(k)].nproc;
    const NodeInfo& n = nodes_.at(static_cast<size_t>(r));
    const std::string ranks = n.nproc == 1 ? str_cat("rank ", first) : str_cat("ranks ", first, "-", first + n.nproc - 1);
    return str_cat("node ", r, " (host ", n.host, ", ", ranks, ") sent no heartbeat for ",
                   node_timeout_.count(), " ms (--node_timeout): its launcher died, or the network to it is down");
  }

  NodeRendezvous& rdzv_;
  std::vector<NodeInfo> nodes_;
  std::chrono::milliseconds node_timeout_;
  Stopwatch since_beat_;
  std::optional<NodeFailure> failure_;
};

// Every worker exited 0: on several nodes, wait for the others (node 0 serves their store).
int finish_completed(const LaunchOptions& o, NodeRendezvous& rdzv, PeerWatch& peers, SignalPipe& signals) {
  launch_info("Pod completed");
  if (o.nnodes == 1) return 0;
  rdzv.mark_done();
  while (node_rank_of(o) == 0 && !rdzv.all_done() && !peers.failed() && !signals.drain()) {
    ::usleep(20000);
  }
  if (peers.failure()) launch_error("the job failed on another node: " + peers.failure()->message);
  if (int sig = signals.terminating_signal()) return 128 + sig;
  return peers.failure() ? 1 : 0;
}

int finish_interrupted(const LaunchOptions& o, Pod& pod, const PodOutcome& out, SignalPipe& signals) {
  launch_info(str_cat("Terminating with signal ", out.signal));
  pod.stop(o.grace_period, &signals, out.signal == SIGHUP ? SIGTERM : out.signal);
  launch_info(str_cat("Exit with signal ", out.signal));
  return 128 + out.signal;
}

// A worker of this node failed: report it here and record it for the other nodes.
int record_failure(const Job& job, const Pod& pod, const PodOutcome& out, NodeRendezvous& rdzv) {
  report_failure(pod, out, job.command);
  const int code = out.status.shell_code();
  if (job.options.nnodes > 1) {
    try {
      rdzv.mark_failed(code, str_cat("rank ", out.global_rank, " on node ", node_rank_of(job.options), ": ",
                                     out.status.describe()));
    } catch (const Error& e) {
      launch_warning(str_cat("could not tell the other nodes: ", e.what()));
    }
  }
  return code;
}

// Another node failed: this node exits with that node's code.
int peer_failure_code(const PeerWatch& peers) {
  const NodeFailure f = peers.failure().value_or(NodeFailure{});
  launch_error("stopping this node's workers: the job failed on another node: " + f.message);
  return f.exit_code == 0 ? 1 : f.exit_code;
}

// How one generation ended: `failed` (a worker here or another node failed) may restart.
struct GenerationEnd {
  int code = 0;
  bool failed = false;
  std::string reason;  // failed: what failed, for the final summary
};

// While a multi-node pod runs, a store call to node 0 that takes longer than --node_timeout
// means node 0, or the network to it, is gone: the other nodes must notice that as fast as
// node 0 notices a silent node (the rendezvous itself waits up to --rendezvous_timeout).
class WatchTimeoutScope {
 public:
  WatchTimeoutScope(dist::Store& store, const LaunchOptions& o) : store_(store), previous_(store.timeout()) {
    if (o.nnodes > 1) store_.set_timeout(o.node_timeout);
  }
  ~WatchTimeoutScope() { store_.set_timeout(previous_); }
  WatchTimeoutScope(const WatchTimeoutScope&) = delete;
  WatchTimeoutScope& operator=(const WatchTimeoutScope&) = delete;

 private:
  dist::Store& store_;
  std::chrono::milliseconds previous_;
};

// Runs one generation and stops its workers.
GenerationEnd run_generation(Job& job, int generation, SignalPipe& signals) {
  const LaunchOptions& o = job.options;
  if (o.nnodes > 1 && node_rank_of(o) == 0) publish_generation(job.store->store(), o.job_id, generation);
  NodeRendezvous rdzv(job.store->store(), o.job_id, generation, o.nnodes, node_rank_of(o));
  const Membership m = rdzv.join(job.node_host, static_cast<int>(job.slots.size()), o.rendezvous_timeout,
                                 [&] { return signals.drain() != 0; });
  Pod pod(pod_spec(job, m, generation), job.reaper.get());
  start_pod(job, pod, m);
  WatchTimeoutScope watch_timeout(job.store->store(), o);
  PeerWatch peers(rdzv, m, o.node_timeout);
  const PodOutcome out = pod.watch(signals, [&] { return peers.failed(); });
  GenerationEnd end;
  switch (out.state) {
    case PodState::COMPLETED:
      end.code = finish_completed(o, rdzv, peers, signals);
      return end;
    case PodState::INTERRUPTED:
      end.code = finish_interrupted(o, pod, out, signals);
      return end;
    case PodState::FAILED:
      end.code = record_failure(job, pod, out, rdzv);
      end.reason = str_cat("rank ", out.global_rank, " (local rank ", out.local_rank,
                           ") failed: ", out.status.describe());
      break;
    case PodState::ABORTED:
      end.code = peer_failure_code(peers);
      end.reason =
          str_cat("the job failed on another node: ", peers.failure().value_or(NodeFailure{}).message);
      break;
  }
  end.failed = true;
  pod.stop(o.grace_period);
  return end;
}

// The pause before a restart, so a failing job does not spin; a terminating signal ends it
// (returns the signal, else 0).
int restart_backoff(std::chrono::milliseconds backoff, SignalPipe& signals) {
  Deadline deadline(backoff);
  while (!deadline.expired()) {
    pollfd p{signals.fd(), POLLIN, 0};
    ::poll(&p, 1, static_cast<int>(std::max<long long>(1, deadline.remaining().count())));
    if (int sig = signals.drain()) return sig;
  }
  return signals.drain();
}

std::string restarts_text(int n) { return str_cat(n, n == 1 ? " restart" : " restarts"); }

// Runs generations until one completes, is interrupted, or fails with no restart left.
// The generation this launcher starts at: 0, or where a running job is when this node's
// launcher comes back (rejoin.h; only with restarts to spare, never node 0). -1: none left.
int first_generation(Job& job) {
  const LaunchOptions& o = job.options;
  if (o.nnodes == 1 || node_rank_of(o) == 0 || o.max_restart == 0) return 0;
  const JoinPoint p = rejoin_generation(job.store->store(), o.job_id, o.nnodes, node_rank_of(o),
                                        std::chrono::milliseconds(2000));
  if (!p.note.empty()) launch_warning(p.note);
  if (p.generation > o.max_restart) {
    launch_error(str_cat("cannot rejoin: the job has used all ", o.max_restart, " restarts (--max_restart)"));
    return -1;
  }
  return p.generation;
}

int run_generations(Job& job, SignalPipe& signals) {
  const LaunchOptions& o = job.options;
  const int first = first_generation(job);
  if (first < 0) return 1;
  for (int generation = first;; ++generation) {
    const GenerationEnd end = run_generation(job, generation, signals);
    if (!end.failed) {
      if (generation > 0 && end.code == 0)
        launch_info(str_cat("job completed after ", restarts_text(generation)));
      return end.code;
    }
    if (generation >= o.max_restart) {
      if (o.max_restart > 0)
        launch_error(str_cat("job failed after ", restarts_text(generation), ": ", end.reason));
      return end.code;
    }
    launch_warning(str_cat("Restarting the job (restart ", generation + 1, " of ", o.max_restart,
                           ", CREW_RESTART_COUNT=", generation + 1, ") in ", o.restart_backoff.count(),
                           " ms"));
    if (int sig = restart_backoff(o.restart_backoff, signals)) {
      launch_info(str_cat("Exit with signal ", sig, " (while waiting to restart)"));
      return 128 + sig;
    }
  }
}

// Where the job's store is: --master, on 127.0.0.1 for a single-node job whatever it names.
void choose_master(Job& job) {
  const LaunchOptions& o = job.options;
  job.master_host = "127.0.0.1";
  if (!o.master.empty()) parse_endpoint(o.master, &job.master_host, &job.master_port, "--master");
  if (o.nnodes == 1 && !is_loopback(job.master_host)) {
    // A single-node job's store is reached by local workers only: never expose it.
    launch_warning(str_cat("a single-node job serves its store on 127.0.0.1 only (not on ", job.master_host,
                           " of --master)"));
    job.master_host = "127.0.0.1";
  }
}

// Every job's store admits only the job: a single-node one against the host's other users,
// a multi-node one against other hosts too. Node 0 generates the token when none is given
// (workers get it as CREW_JOB_TOKEN); the other nodes of a multi-node job must be given it.
void choose_token(Job& job) {
  const LaunchOptions& o = job.options;
  if (!job.token.empty()) return;
  CREW_CHECK(node_rank_of(o) == 0, "launch (node ", node_rank_of(o),
             "): a multi-node job's store requires the job token "
             "that node 0's launcher prints; pass --token TOKEN or set CREW_JOB_TOKEN");
  job.token = generate_job_token();
  if (o.nnodes == 1) return;  // only this launcher's workers need it: never shown
  launch_info(str_cat("Job token: ", job.token, " (pass --token ", job.token,
                      " or CREW_JOB_TOKEN to the launchers of the other nodes)"));
}

// This node's address as the other nodes reach it.
void choose_node_host(Job& job) {
  const LaunchOptions& o = job.options;
  job.node_host = !o.host.empty() ? o.host : local_address_towards(job.master_host);
  if (o.nnodes > 1 && !is_loopback(job.master_host)) {
    CREW_CHECK(!is_loopback(job.node_host), "launch: node ", node_rank_of(o),
               " would announce loopback address ", job.node_host, " to a multi-node job; pass --host");
  }
}

// Node 0 serves the job's store, the others connect to it.
void open_store(Job& job) {
  const LaunchOptions& o = job.options;
  job.reaper = std::make_unique<GroupReaper>();  // before the store: it inherits no socket
  if (node_rank_of(o) == 0) {
    job.store = JobStore::serve(job.master_host, job.master_port, job.token, kStoreTimeout);
    job.master_port = job.store->port();
  } else {
    job.store = JobStore::connect(job.master_host, job.master_port, job.token, o.rendezvous_timeout);
  }
  launch_info(str_cat("Job: ", o.job_id, ", mode collective, replicas ", job.slots.size(), "[", o.nnodes,
                      " node", o.nnodes > 1 ? "s" : "", "], devices ", to_string(job.inventory.kind),
                      ", store ", job.master_host, ":", job.master_port,
                      node_rank_of(o) == 0 ? " (served by this launcher)" : ""));
}

// --log_ranks naming a local rank this node does not run shows nothing for it: say so.
void check_console_ranks(const Job& job) {
  const ConsoleRanks& c = job.options.log_ranks;
  for (int r : c.all ? std::vector<int>{} : c.local_ranks) {
    if (r >= static_cast<int>(job.slots.size())) {
      launch_warning(str_cat("--log_ranks=", to_string(c), ": this node runs local ranks 0..",
                             job.slots.size() - 1, ", so local rank ", r, " shows nothing"));
    }
  }
}

void prepare_job(Job& job) {
  const LaunchOptions& o = job.options;
  job.inventory = detect_devices();
  job.slots = plan_workers(job.inventory, o.devices, o.nproc_per_node, o.cpu_affinity);
  check_console_ranks(job);
  make_dirs(o.log_dir);
  job.log_dir = absolute(o.log_dir);
  choose_master(job);
  choose_token(job);
  choose_node_host(job);
  open_store(job);
}

}  // namespace

int run_launch(const LaunchOptions& o) {
  set_launch_log_level(parse_log_level(o.log_level));
  print_configuration(o);
  ::signal(SIGPIPE, SIG_IGN);  // a vanished console or helper must not kill the launcher
  Job job(o);
  try {
    job.command.push_back(dist::resolve_program(o.program));
  } catch (const SpawnError& e) {
    launch_error(e.what());
    return 127;
  }
  job.command.insert(job.command.end(), o.program_args.begin(), o.program_args.end());
  try {
    prepare_job(job);
    SignalPipe signals;
    const int code = run_generations(job, signals);
    launch_info(str_cat("Exit code ", code));
    return code;
  } catch (const Error& e) {
    launch_error(e.what());
    launch_info("Exit code 1");
    return 1;
  }
}

}  // namespace crew::launch
