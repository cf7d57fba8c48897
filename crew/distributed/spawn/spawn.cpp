#include "crew/distributed/spawn/spawn.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "crew/core/check.h"
#include "crew/core/id_list.h"
#include "crew/core/env.h"
#include "crew/core/job_token.h"
#include "crew/core/parallel_env.h"
#include "crew/core/spawn_process.h"
#include "crew/core/timer.h"
#include "crew/distributed/spawn/spawn_frame.h"
#include "crew/distributed/spawn/spawn_store.h"
#include "crew/distributed/spawn/spawn_wire.h"

namespace crew::dist {
namespace {

intptr_t offset_of(const void* p) {
  return reinterpret_cast<intptr_t>(p) - reinterpret_cast<intptr_t>(&detail::spawn_anchor);
}

// The object (executable or shared library) holding address p.
const void* object_base(const void* p) {
  Dl_info info{};
  return ::dladdr(p, &info) ? info.dli_fbase : nullptr;
}

std::vector<std::string> self_argv() {
  std::string all;
  FILE* f = std::fopen("/proc/self/cmdline", "rb");
  CREW_CHECK_T(SpawnError, f != nullptr, errno_message("spawn: cannot read /proc/self/cmdline"));
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) all.append(buf, n);
  std::fclose(f);
  std::vector<std::string> argv;
  size_t start = 0;
  while (start < all.size()) {
    size_t end = all.find('\0', start);
    if (end == std::string::npos) end = all.size();
    argv.push_back(all.substr(start, end - start));
    start = end + 1;
  }
  if (argv.empty()) argv.push_back("crew-spawn-child");
  return argv;
}

int usable_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof(set), &set) != 0) return 1;
  return std::max(1, CPU_COUNT(&set));
}

}  // namespace

// Device ids for the children (the launcher's CPU-slot rule, see crew/launch/devices.h).
std::vector<int> spawn_devices(const SpawnOptions& o) {
  const int cores = usable_cores();
  const int slots = static_cast<int>(env::get_int("CREW_CPU_SLOTS", std::max(cores, 8)));
  std::vector<int> ids;
  if (!o.devices.empty()) {
    ids = parse_id_list(o.devices, "spawn: devices");
    for (int id : ids) {
      CREW_CHECK(id < slots, "spawn: devices='", o.devices, "': device ", id,
                 " does not exist (cpu slots 0..", slots - 1, ")");
    }
    CREW_CHECK(o.nprocs < 0 || o.nprocs == static_cast<int>(ids.size()),
               "spawn: the number of selected devices (", ids.size(),
               ") is not equal to the number of spawn processes (", o.nprocs, ")");
    return ids;
  }
  const int n = o.nprocs < 0 ? cores : o.nprocs;
  CREW_CHECK(n >= 1, "spawn: nprocs must be >= 1 or -1, got ", o.nprocs);
  for (int i = 0; i < n; ++i) ids.push_back(i % slots);
  return ids;
}

ParallelEnv spawn_child_env(int rank, const std::vector<int>& devices, int port, const std::string& job_id,
                            const std::string& token) {
  ParallelEnv c;
  c.source = "crew";
  c.rank = rank;
  c.world_size = static_cast<int>(devices.size());
  c.local_rank = rank;
  c.local_world_size = c.world_size;
  c.device_id = devices.at(static_cast<size_t>(rank));
  c.master_addr = "127.0.0.1";
  c.master_port = port;
  c.job_id = job_id;
  c.job_token = token;
  c.trainer_endpoints = nominal_endpoints({c.master_addr}, {c.world_size}, port);
  return c;
}

WorkerEnv spawn_worker_env(int rank, const std::vector<int>& devices, int port, const std::string& job_id,
                           const std::string& token, bool parent_hosts_store) {
  WorkerEnv w;
  w.parallel = spawn_child_env(rank, devices, port, job_id, token);
  w.store_hosted = parent_hosts_store;
  w.num_threads = std::max(1, usable_cores() / static_cast<int>(devices.size()));
  return w;
}

struct SpawnContext::State {
  std::unique_ptr<SpawnStoreServer> store;
  std::vector<ChildProcess> children;
  std::vector<int> sockets;
  std::vector<std::string> inbox;
  std::vector<std::string> results;
  std::chrono::milliseconds grace{SpawnOptions::kDefaultGracePeriod};
  bool done = false;

  ~State() {
    stop_all();
    for (int fd : sockets) {
      if (fd >= 0) ::close(fd);
    }
  }

  void stop_all() {
    for (auto& c : children) {
      if (c.running()) c.signal_group(SIGTERM);
    }
    Deadline deadline(grace);
    for (auto& c : children) {
      if (c.running()) c.wait_for(deadline.remaining());
    }
    for (auto& c : children) {
      if (c.running()) c.terminate(std::chrono::milliseconds(0));
    }
  }

  // Reads whatever the children sent so far.
  void receive(int timeout_ms) {
    std::vector<pollfd> fds;
    std::vector<size_t> which;
    for (size_t i = 0; i < sockets.size(); ++i) {
      if (sockets[i] >= 0) {
        fds.push_back({sockets[i], POLLIN, 0});
        which.push_back(i);
      }
    }
    if (fds.empty()) {
      ::usleep(static_cast<useconds_t>(timeout_ms) * 1000);
      return;
    }
    if (::poll(fds.data(), fds.size(), timeout_ms) <= 0) return;
    for (size_t k = 0; k < fds.size(); ++k) {
      if (!(fds[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const size_t i = which[k];
      char buf[65536];
      ssize_t n = ::recv(sockets[i], buf, sizeof(buf), MSG_DONTWAIT);
      if (n > 0) {
        inbox[i].append(buf, static_cast<size_t>(n));
      } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
        ::close(sockets[i]);
        sockets[i] = -1;
      }
    }
  }

  // Child i's report (nullopt: it sent none); SpawnError for a malformed one.
  std::optional<SpawnReport> report(size_t i) const { return decode_report(inbox[i]); }
};

SpawnContext::SpawnContext(std::unique_ptr<State> state) : state_(std::move(state)) {}
SpawnContext::SpawnContext(SpawnContext&&) noexcept = default;
SpawnContext& SpawnContext::operator=(SpawnContext&&) noexcept = default;
SpawnContext::~SpawnContext() = default;

int SpawnContext::nprocs() const { return static_cast<int>(state_->children.size()); }

std::vector<pid_t> SpawnContext::pids() const {
  std::vector<pid_t> out;
  for (const auto& c : state_->children) out.push_back(c.pid());
  return out;
}

const std::string& SpawnContext::raw_result(int rank) const {
  CREW_CHECK_T(IndexError, rank >= 0 && rank < nprocs(), "spawn: result(", rank, "): rank out of range [0, ",
               nprocs(), ")");
  CREW_CHECK_T(StateError, state_->done, "spawn: result(", rank, ") before join() returned true");
  return state_->results[static_cast<size_t>(rank)];
}

bool SpawnContext::join(std::optional<std::chrono::milliseconds> timeout) {
  State& s = *state_;
  if (s.done) return true;
  Deadline deadline(timeout.value_or(std::chrono::hours(24 * 365)));
  while (true) {
    s.receive(10);
    bool all_done = true;
    for (size_t i = 0; i < s.children.size(); ++i) {
      const auto& st = s.children[i].poll();
      if (!st) {
        all_done = false;
        continue;
      }
      // Collect the rest of what it sent (its socket reaches EOF now that it has exited).
      for (int k = 0; k < 100 && s.sockets[i] >= 0; ++k) s.receive(5);
      std::optional<SpawnReport> report;
      std::string malformed;
      try {
        report = s.report(i);
      } catch (const SpawnError& e) {
        malformed = e.what();
      }
      const bool raised = report && report->kind == SpawnReport::Kind::ERROR;
      if (st->success() && !raised && malformed.empty()) continue;
      const pid_t pid = s.children[i].pid();
      s.stop_all();
      if (raised) {
        CREW_THROW(SpawnError, "spawn: process ", i, " (pid ", pid,
                   ") terminated with the following error:\n", report->payload);
      }
      if (st->success()) {
        CREW_THROW(SpawnError, "spawn: process ", i, " (pid ", pid, ") exited but its report is malformed: ",
                   malformed);
      }
      CREW_THROW(SpawnError, "spawn: process ", i, " (pid ", pid, ") terminated with ", st->describe(), ".");
    }
    if (all_done) {
      s.results.clear();
      for (size_t i = 0; i < s.children.size(); ++i) {
        auto report = s.report(i);
        s.results.push_back(report ? report->payload : "");
      }
      s.done = true;
      return true;
    }
    if (deadline.expired()) return false;
  }
}

namespace {

// What start_spawn hands every child.
struct SpawnPlan {
  std::vector<std::string> base_env;  // the parent's environment
  std::vector<std::string> argv;      // the parent's, run again by each child
  std::vector<int> devices;           // one per child
  int store_port = 0;                 // of the store the parent serves
  std::string token;                  // the store's job token, made for this spawn
  std::string job_id;
  std::string entry;  // "<entry offset>,<fn offset>" (kSpawnEntryVar)
};

void check_spawnable(detail::SpawnEntry entry, void* fn) {
  CREW_CHECK_T(StateError, !is_spawned_child(),
               "spawn: called from a spawned child (nested spawn is not supported)");
  const void* exe = object_base(reinterpret_cast<const void*>(&detail::spawn_anchor));
  CREW_CHECK(object_base(fn) == exe && object_base(reinterpret_cast<const void*>(entry)) == exe,
             "spawn: the function must be defined in the executable itself, not in a shared library");
}

// Everything but the store's port, which start_spawn fills in.
SpawnPlan make_plan(const SpawnOptions& o, detail::SpawnEntry entry, void* fn) {
  SpawnPlan plan;
  plan.devices = spawn_devices(o);
  plan.base_env = current_environment();
  plan.argv = self_argv();
  plan.job_id = o.job_id;
  plan.entry =
      std::to_string(offset_of(reinterpret_cast<const void*>(entry))) + "," + std::to_string(offset_of(fn));
  return plan;
}

std::vector<std::string> child_environment(const SpawnPlan& plan, int rank, int fd) {
  std::vector<std::string> env = worker_environment(
      plan.base_env, spawn_worker_env(rank, plan.devices, plan.store_port, plan.job_id, plan.token, true));
  auto set = [&](const char* k, const std::string& v) { set_env_entry(&env, k, v); };
  set(kSpawnChildVar, std::to_string(rank));
  set(detail::kSpawnEntryVar, plan.entry);
  set(detail::kSpawnFdVar, std::to_string(fd));
  return env;
}

// Starts child `rank` and sends it the encoded arguments over its socket.
void start_child(SpawnContext::State& state, const SpawnPlan& plan, int rank, const std::string& args) {
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
    CREW_THROW(SpawnError, errno_message("spawn: socketpair"));
  }
  state.sockets.push_back(pair[0]);
  state.inbox.emplace_back();
  ChildOptions co;
  co.path = "/proc/self/exe";
  co.argv = plan.argv;
  co.env = child_environment(plan, rank, pair[1]);
  co.keep_fds = {pair[1]};
  try {
    state.children.push_back(ChildProcess::start(co));
  } catch (...) {
    ::close(pair[1]);
    throw;  // ~State stops the children started so far
  }
  ::close(pair[1]);
  const std::string frame = encode_args_frame(args);
  detail::spawn_write_exact(pair[0], frame.data(), frame.size());
}

}  // namespace

namespace detail {

SpawnContext start_spawn(SpawnEntry entry, void* fn, std::string args, const SpawnOptions& o) {
  check_spawnable(entry, fn);
  SpawnPlan plan = make_plan(o, entry, fn);
  auto state = std::make_unique<SpawnContext::State>();
  state->grace = o.grace_period;
  plan.token = generate_job_token();
  state->store = std::make_unique<SpawnStoreServer>(plan.token);
  plan.store_port = state->store->port();
  const int n = static_cast<int>(plan.devices.size());
  for (int r = 0; r < n; ++r) start_child(*state, plan, r, args);
  SpawnContext context(std::move(state));
  if (o.join && !context.join(o.timeout)) {
    CREW_THROW(TimeoutError, "spawn: the ", n, " processes did not finish within ", o.timeout->count(),
               " ms; stopped them");
  }
  return context;
}

}  // namespace detail
}  // namespace crew::dist
