#include "crew/distributed/parallel/parallel.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <thread>

#include "crew/core/check.h"
#include "crew/core/env.h"
#include "crew/core/logging.h"
#include "crew/core/parallel_env.h"
#include "crew/core/timer.h"
#include "crew/distributed/backends/backend_unavailable.h"
#include "crew/distributed/backends/builtin_backends.h"
#include "crew/distributed/backends/nccl/nccl_process_group.h"
#include "crew/distributed/parallel/host_layout.h"
#include "crew/distributed/parallel/world_check.h"
#include "crew/distributed/process_group/work.h"
#include "crew/distributed/store/prefix_store.h"
#include "crew/distributed/store/tcp_store.h"

namespace crew::dist {

Group::Group(int rank, int id, std::vector<int> ranks, std::shared_ptr<ProcessGroup> pg, std::string name)
    : rank_(rank), id_(id), ranks_(std::move(ranks)), pg_(std::move(pg)), name_(std::move(name)) {}

int Group::get_group_rank(int global_rank) const {
  auto it = std::find(ranks_.begin(), ranks_.end(), global_rank);
  return it == ranks_.end() ? -1 : static_cast<int>(it - ranks_.begin());
}

namespace {

// The job's store: a client, which on the rank that hosts the store also runs the server.
struct StoreConnection {
  std::shared_ptr<TCPStore> client;
  bool hosts_server = false;
};

// A store rank 0 hosts admits only the job: every rank must have the same token (crew launch
// and spawn hand one out; under srun or mpirun the user gives it), or the user must say
// explicitly that any local user (or host that reaches the port) may join.
void check_store_token(const ParallelEnv& env) {
  if (!env.job_token.empty()) return;
  CREW_CHECK_T(StoreError, env.insecure_store, "init_parallel_env (rank ", env.rank,
               "): this rank hosts the job's store at ", env.master_endpoint(),
               " and no job token is set: give every rank the same secret in CREW_JOB_TOKEN (e.g. "
               "export CREW_JOB_TOKEN=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \\n') before srun or "
               "mpirun) or CREW_JOB_TOKEN_FILE (a file of mode 0600), or start the job with crew launch; "
               "CREW_INSECURE_STORE=1 serves it without a token (any local user could join the job)");
  CREW_LOG(WARNING) << "init_parallel_env (rank " << env.rank << "): serving the job's store at "
                    << env.master_endpoint()
                    << " without a job token (CREW_INSECURE_STORE=1): any local user, or host that "
                       "reaches it, can read and write the job's keys";
}

StoreConnection connect_store(const ParallelEnv& env, std::chrono::milliseconds timeout) {
  CREW_CHECK(env.has_master(), "init_parallel_env (rank ", env.rank, " of ", env.world_size,
             "): no rendezvous address; set CREW_MASTER=HOST:PORT (or PADDLE_MASTER, or MASTER_ADDR and "
             "MASTER_PORT), or start the job with crew launch");
  StoreConnection job;
  job.hosts_server = env.rank == 0 && !env::get_bool("CREW_STORE_HOSTED", false);
  if (job.hosts_server) check_store_token(env);
  TCPStoreOptions options;
  options.port = env.master_port;
  options.is_server = job.hosts_server;
  options.timeout = timeout;
  options.connect_timeout = timeout;
  options.job_token = env.job_token;
  options.insecure = env.insecure_store;
  job.client = std::make_shared<TCPStore>(env.master_addr, options);
  return job;
}

// A second client of the job's store for hang reports: a report must get through while this
// rank's main thread blocks in a store wait on the job's connection (requests are serialised).
std::shared_ptr<Store> connect_debug_store(const ParallelEnv& env, std::chrono::milliseconds timeout) {
  TCPStoreOptions options;
  options.port = env.master_port;
  options.timeout = timeout;
  options.connect_timeout = timeout;
  options.job_token = env.job_token;
  return std::make_shared<TCPStore>(env.master_addr, options);
}

// How long the rank hosting the store waits at exit for the others once a collective failed.
constexpr std::chrono::milliseconds kExitTimeoutAfterFailure{std::chrono::seconds(2)};

// Everything init_parallel_env sets up; torn down by destroy_process_group or at exit.
struct Runtime {
  std::mutex mutex;
  ParallelEnv env;
  StoreConnection store_connection;   // the store connection (and server on rank 0)
  std::shared_ptr<Store> root;        // store_connection.client under "crew/<restart>/<gen>/"
  std::shared_ptr<Store> debug_root;  // the same keys through the hang reports' own client
  std::map<int, std::shared_ptr<Group>> groups;
  std::shared_ptr<Group> self_group;  // a world of one, after init_parallel_env
  std::string backend;                // the default group's backend
  bool backend_automatic = false;     // chosen by "auto" (so it may fall back to gloo)
  std::chrono::milliseconds timeout{ProcessGroupOptions::kDefaultTimeout};
  std::chrono::milliseconds exit_timeout{InitOptions::kDefaultExitTimeout};
  DebugOptions debug;  // every multi-rank group is wrapped in a DebugProcessGroup with these
  int next_group_id = 1;
  int generation = 0;  // init_parallel_env calls so far in this process

  ~Runtime() {
    try {
      destroy_groups();
      close_store();
    } catch (const std::exception& e) {
      CREW_LOG(WARNING) << "crew::dist shutdown at exit: " << e.what();
    }
  }

  // Groups go; the store connection stays for the next init_parallel_env (keys of the next
  // generation live under a fresh prefix) until the process exits, as Paddle's global store.
  void destroy_groups() {
    groups.clear();  // joins each group's worker thread
    self_group.reset();
    root.reset();
    debug_root.reset();
  }

  // At exit. The rank hosting the store waits (bounded) until every rank has left, so that
  // no rank loses the store in the middle of its own teardown or of a subgroup's rendezvous.
  void close_store() {
    if (!store_connection.client) return;
    try {
      const std::string key = str_cat("crew/", env.restart_count, "/exit");
      const int64_t left = store_connection.client->add(key, 1);
      if (store_connection.hosts_server && left < env.world_size) {
        // After a lost peer (a collective failed), a dead rank never leaves: wait only briefly.
        const auto wait = collective_failed_in_process() ? std::min(exit_timeout, kExitTimeoutAfterFailure)
                                                         : exit_timeout;
        Deadline deadline(wait);
        while (store_connection.client->add(key, 0) < env.world_size) {
          if (deadline.expired()) {
            CREW_LOG(WARNING) << "crew::dist shutdown (rank " << env.rank
                              << "): " << store_connection.client->add(key, 0) << " of " << env.world_size
                              << " ranks left within " << format_duration(wait)
                              << "; closing the store anyway";
            break;
          }
          std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
      }
    } catch (const std::exception& e) {
      CREW_LOG(WARNING) << "crew::dist shutdown (rank " << env.rank
                        << "): leaving the store failed: " << e.what();
    }
    store_connection = StoreConnection{};
  }
};

Runtime& runtime() {
  static Runtime r;
  return r;
}

// The backend to use and whether "auto" chose it.
struct BackendChoice {
  std::string name;
  bool automatic = false;
};

// Resolves "auto": nccl when every rank is on a GPU of its own, else from where the ranks
// run (see auto_backend_for): shm on one host, hier on several hosts with more than one rank
// each, else gloo.
BackendChoice choose_backend(const std::string& requested, Store& root, const ParallelEnv& env,
                             std::chrono::milliseconds timeout) {
  std::string backend = requested.empty() ? "auto" : requested;
  if (backend == "auto") backend = env::get_string("CREW_BACKEND", "auto");
  if (backend != "auto") {
    if (!is_backend_registered(backend)) {
      std::string known;
      for (const auto& name : registered_backends()) known += (known.empty() ? "" : ", ") + name;
      CREW_THROW(ValueError, "init_parallel_env (rank ", env.rank, "): backend '", backend,
                 "' is not available; choose auto or one of: ", known);
    }
    return {backend, false};
  }
  // Every rank on a GPU of its own: nccl. Ranks sharing a GPU (or on the CPU) get the host
  // backend below, which create_process_group wraps in the staged group for device tensors.
  if (nccl_fits_job(root, env.rank, env.world_size, timeout)) return {"nccl", true};
  const auto layout = HostLayout::from_ids(exchange_host_ids(root, env.rank, env.world_size, timeout));
  return {auto_backend_for(layout), true};
}

// Creates a group with the chosen backend. When "auto" chose a backend that then could not
// get its shared memory (every rank throws BackendUnavailableError together, after agreeing
// through the store), every rank creates a Gloo group instead and rank 0 says so.
std::shared_ptr<ProcessGroup> create_group_with_fallback(const BackendChoice& choice,
                                                         const std::shared_ptr<Store>& store, int rank,
                                                         int size, const ProcessGroupOptions& options) {
  try {
    return create_process_group(choice.name, store, rank, size, options);
  } catch (const BackendUnavailableError& e) {
    if (!choice.automatic || choice.name == "gloo") throw;
    if (rank == 0) {
      CREW_LOG(WARNING) << "crew::dist: group " << options.group_name << " falls back from backend "
                        << choice.name << " to gloo on every rank: " << e.what();
    }
    return create_process_group("gloo", std::make_shared<PrefixStore>("fallback/", store), rank, size,
                                options);
  }
}

std::string pg_name(int id) { return id == 0 ? "default" : str_cat("group", id); }
std::string group_name(int id) { return id == 0 ? "_default_pg" : str_cat("_default_pg", id); }

}  // namespace

std::shared_ptr<Group> init_parallel_env(const InitOptions& options) {
  Runtime& rt = runtime();
  std::lock_guard<std::mutex> lock(rt.mutex);
  if (auto it = rt.groups.find(0); it != rt.groups.end()) return it->second;
  register_builtin_backends();
  rt.env = ParallelEnv::from_env();
  rt.timeout =
      options.timeout.value_or(env::get_duration("CREW_TIMEOUT", ProcessGroupOptions::kDefaultTimeout));
  CREW_CHECK(rt.timeout.count() > 0, "init_parallel_env: timeout must be positive, got ", rt.timeout.count(),
             " ms");
  rt.exit_timeout = options.exit_timeout;
  if (rt.env.world_size < 2) {
    if (options.warn_not_parallel) CREW_LOG(WARNING) << kNotParallelWarning;
    ProcessGroupOptions pg_options{rt.timeout, "default"};
    rt.self_group = std::make_shared<Group>(0, 0, std::vector<int>{0}, create_self_process_group(pg_options),
                                            group_name(0));
    return nullptr;
  }
  const auto store_timeout = options.store_timeout.value_or(
      env::get_duration("CREW_STORE_TIMEOUT", InitOptions::kDefaultStoreTimeout));
  // Built in locals and committed at the end, so a failed init leaves nothing half set up.
  StoreConnection job =
      rt.store_connection.client ? rt.store_connection : connect_store(rt.env, store_timeout);
  const std::string prefix = str_cat("crew/", rt.env.restart_count, "/", rt.generation++, "/");
  auto root = std::make_shared<PrefixStore>(prefix, job.client);
  detail::check_world(*root, rt.env, store_timeout);  // world size, duplicate ranks
  const BackendChoice choice = choose_backend(options.backend, *root, rt.env, store_timeout);
  std::vector<int> ranks(rt.env.world_size);
  for (int r = 0; r < rt.env.world_size; ++r) ranks[r] = r;
  rt.debug = options.debug.value_or(DebugOptions::from_env());
  auto debug_root = std::make_shared<PrefixStore>(prefix, connect_debug_store(rt.env, store_timeout));
  auto pg = wrap_for_debug(
      create_group_with_fallback(choice, std::make_shared<PrefixStore>("pg/0/", root), rt.env.rank,
                                 rt.env.world_size, ProcessGroupOptions{rt.timeout, pg_name(0)}),
      std::make_shared<PrefixStore>("pg/0/", debug_root), rt.debug);
  auto group = std::make_shared<Group>(rt.env.rank, 0, std::move(ranks), std::move(pg), group_name(0));
  rt.store_connection = std::move(job);
  rt.root = std::move(root);
  rt.debug_root = std::move(debug_root);
  rt.backend = group->backend();  // "gloo" after a fallback, so subgroups do not retry shm
  rt.backend_automatic = choice.automatic;
  rt.groups[0] = group;
  rt.next_group_id = 1;
  CREW_LOG(DEBUG) << "init_parallel_env: rank " << rt.env.rank << " of " << rt.env.world_size
                  << " joined group " << group->name() << " (backend " << group->backend() << ")";
  return group;
}

bool is_initialized() {
  Runtime& rt = runtime();
  std::lock_guard<std::mutex> lock(rt.mutex);
  return rt.groups.count(0) > 0;
}

int get_rank(const Group* group) {
  if (group) return group->rank();
  Runtime& rt = runtime();
  {
    std::lock_guard<std::mutex> lock(rt.mutex);
    if (rt.groups.count(0)) return rt.env.rank;
  }
  return ParallelEnv::from_env().rank;
}

int get_world_size(const Group* group) {
  if (group) return group->world_size();
  Runtime& rt = runtime();
  {
    std::lock_guard<std::mutex> lock(rt.mutex);
    if (auto it = rt.groups.find(0); it != rt.groups.end()) return it->second->world_size();
  }
  return ParallelEnv::from_env().world_size;
}

std::shared_ptr<Group> new_group(const std::vector<int>& ranks, const std::string& backend) {
  Runtime& rt = runtime();
  std::lock_guard<std::mutex> lock(rt.mutex);
  CREW_CHECK_T(StateError, rt.groups.count(0) > 0, kNotInitializedMessage);
  std::vector<int> members = ranks;
  if (members.empty()) {
    for (int r = 0; r < rt.env.world_size; ++r) members.push_back(r);
  }
  std::sort(members.begin(), members.end());
  CREW_CHECK(std::adjacent_find(members.begin(), members.end()) == members.end(), "new_group (rank ",
             rt.env.rank, "): ranks must be distinct");
  CREW_CHECK(members.front() >= 0 && members.back() < rt.env.world_size, "new_group (rank ", rt.env.rank,
             "): ranks must be in [0, ", rt.env.world_size, "), got ", members.front(), "..", members.back());
  const int id = rt.next_group_id++;
  auto it = std::find(members.begin(), members.end(), rt.env.rank);
  std::shared_ptr<ProcessGroup> pg;
  int my_rank = -1;
  if (it != members.end() && members.size() == 1) {
    my_rank = 0;
    pg = create_self_process_group(ProcessGroupOptions{rt.timeout, pg_name(id)});
  } else if (it != members.end()) {
    my_rank = static_cast<int>(it - members.begin());
    const BackendChoice choice =
        backend.empty() ? BackendChoice{rt.backend, rt.backend_automatic} : BackendChoice{backend, false};
    const std::string pg_prefix = str_cat("pg/", id, "/");
    pg = wrap_for_debug(create_group_with_fallback(choice, std::make_shared<PrefixStore>(pg_prefix, rt.root),
                                                   my_rank, static_cast<int>(members.size()),
                                                   ProcessGroupOptions{rt.timeout, pg_name(id)}),
                        std::make_shared<PrefixStore>(pg_prefix, rt.debug_root), rt.debug);
  }
  auto group = std::make_shared<Group>(my_rank, id, std::move(members), std::move(pg), group_name(id));
  rt.groups[id] = group;
  return group;
}

std::shared_ptr<Group> get_group(int id) {
  Runtime& rt = runtime();
  std::lock_guard<std::mutex> lock(rt.mutex);
  auto it = rt.groups.find(id);
  return it == rt.groups.end() ? nullptr : it->second;
}

std::shared_ptr<Group> default_group() {
  auto group = get_group(0);
  CREW_CHECK_T(StateError, group != nullptr, kNotInitializedMessage);
  return group;
}

void destroy_process_group(const Group* group) {
  Runtime& rt = runtime();
  std::lock_guard<std::mutex> lock(rt.mutex);
  if (group != nullptr && group->id() != 0) {
    rt.groups.erase(group->id());
    return;
  }
  rt.destroy_groups();
}

std::shared_ptr<Store> global_store() {
  Runtime& rt = runtime();
  std::lock_guard<std::mutex> lock(rt.mutex);
  CREW_CHECK_T(StateError, rt.root != nullptr, kNotInitializedMessage);
  return rt.root;
}

namespace detail {

Group& resolve_group(Group* group) {
  if (group) return *group;
  Runtime& rt = runtime();
  std::lock_guard<std::mutex> lock(rt.mutex);
  if (auto it = rt.groups.find(0); it != rt.groups.end()) return *it->second;
  if (rt.self_group) return *rt.self_group;
  CREW_THROW(StateError, kNotInitializedMessage);
}

}  // namespace detail

}  // namespace crew::dist
