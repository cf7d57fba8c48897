#pragma once
// The parallel environment of a job: init_parallel_env, the default group, new_group, and
// Paddle's queries (get_rank, get_world_size, is_initialized).
//
//   auto group = crew::dist::init_parallel_env();     // null in a world of one process
//   int rank = crew::dist::get_rank();
//   crew::dist::all_reduce(grad);                      // on the default group
//   auto evens = crew::dist::new_group({0, 2});        // every rank calls it, in the same order
//   if (evens->is_member()) crew::dist::all_reduce(x, ReduceOp::SUM, evens.get());
//   crew::dist::destroy_process_group();              // also done at exit
//
// Rendezvous (init_parallel_env): every rank connects to the job's TCPStore at CREW_MASTER
// (else PADDLE_MASTER, MASTER_ADDR + MASTER_PORT, or the first of PADDLE_TRAINER_ENDPOINTS;
// see docs/environment.md), which rank 0 hosts unless CREW_STORE_HOSTED=1 says the launcher
// does. Through it the ranks check that they agree on the world (its size, no rank twice),
// choose the backend ("auto": from the hosts they run on) and build the default group, whose
// backend connects its ranks through the store in turn. Keys live under
// "crew/<restart count>/<init generation>/", so a restarted job (or a second
// init_parallel_env) never reads a previous attempt's keys.
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "crew/distributed/debug/debug_process_group.h"
#include "crew/distributed/process_group/process_group.h"

namespace crew::dist {

class Store;

// The exact message of using the distributed API before init_parallel_env.
inline constexpr const char* kNotInitializedMessage =
    "Call crew::dist::init_parallel_env first to initialize the distributed environment.";
// The exact warning of init_parallel_env in a world of one process.
inline constexpr const char* kNotParallelWarning =
    "Currently not a parallel execution environment, init_parallel_env will not do anything.";

struct InitOptions {
  static constexpr std::chrono::milliseconds kDefaultStoreTimeout{std::chrono::minutes(15)};
  static constexpr std::chrono::milliseconds kDefaultExitTimeout{std::chrono::seconds(30)};
  // "gloo", "shm", "hier", "nccl" or "auto": nccl when every rank's current place is a GPU
  // of its own (crew's CUDA build), else shm when every rank runs on this host, hier when the
  // ranks span hosts that each run more than one, else gloo (host_layout.h); an automatic
  // shm or hier that cannot get its shared memory falls back to gloo on every rank. With
  // "auto", CREW_BACKEND, when set, decides.
  std::string backend = "auto";
  // Per collective; nullopt = CREW_TIMEOUT, else 30 minutes.
  std::optional<std::chrono::milliseconds> timeout;
  // Connecting to the store and waiting for every rank to arrive (CREW_STORE_TIMEOUT).
  std::optional<std::chrono::milliseconds> store_timeout;
  // At exit, how long the rank hosting the store waits for the others to leave it (at most
  // 2 s once a collective of this process failed: a dead rank never leaves).
  std::chrono::milliseconds exit_timeout = kDefaultExitTimeout;
  // Hang and desync detection of the default group and of new_group's groups
  // (docs/hang_detection.md); nullopt = DebugOptions::from_env() (CREW_DIST_DEBUG, CREW_HANG_TIMEOUT).
  std::optional<DebugOptions> debug;
  // Log kNotParallelWarning in a world of one (the Python package warns in Python instead).
  bool warn_not_parallel = true;
};

// A set of ranks with its ProcessGroup (Paddle's Group). Ranks are global ranks, sorted.
class Group {
 public:
  Group(int rank, int id, std::vector<int> ranks, std::shared_ptr<ProcessGroup> pg, std::string name);

  // This process's rank in the group, -1 when it is not a member.
  int rank() const { return rank_; }
  const std::vector<int>& ranks() const { return ranks_; }
  int nranks() const { return static_cast<int>(ranks_.size()); }
  // nranks() for members, -1 otherwise (as Paddle).
  int world_size() const { return is_member() ? nranks() : -1; }
  int id() const { return id_; }
  const std::string& name() const { return name_; }
  // Null for non-members.
  ProcessGroup* process_group() const { return pg_.get(); }
  const std::shared_ptr<ProcessGroup>& process_group_ptr() const { return pg_; }
  std::string backend() const { return pg_ ? pg_->backend_name() : ""; }
  bool is_member() const { return rank_ >= 0; }
  // The group rank of a global rank, -1 when it is not in the group.
  int get_group_rank(int global_rank) const;

 private:
  int rank_;
  int id_;
  std::vector<int> ranks_;
  std::shared_ptr<ProcessGroup> pg_;
  std::string name_;
};

// Rendezvouses and creates the default group (id 0, "_default_pg"); a second call returns it.
// In a world of one process it logs kNotParallelWarning, returns null, and is_initialized()
// stays false (collectives then act on a group of one rank).
std::shared_ptr<Group> init_parallel_env(const InitOptions& options = {});
bool is_initialized();
// The group's rank (-1 for a non-member); without a group the global rank from the
// environment, before and after init (as Paddle).
int get_rank(const Group* group = nullptr);
// The group's size (-1 for a non-member); without a group the default group's size once
// initialized, else the world size from the environment.
int get_world_size(const Group* group = nullptr);
// Creates a group of the given global ranks (all ranks when empty). Every rank of the job calls
// it, in the same order; non-members get a Group with rank -1 and no ProcessGroup.
std::shared_ptr<Group> new_group(const std::vector<int>& ranks = {}, const std::string& backend = "");
// The group with this id (0 = default), or null.
std::shared_ptr<Group> get_group(int id = 0);
// The default group; StateError with kNotInitializedMessage before init.
std::shared_ptr<Group> default_group();
// Destroys `group`, or every group when null (is_initialized() turns false). The store
// connection stays for a later init_parallel_env and is closed at exit.
void destroy_process_group(const Group* group = nullptr);
// The job's store (for the DataParallel / launcher layers); StateError before init.
std::shared_ptr<Store> global_store();

namespace detail {
// The group a collective runs on: `group`, else the default group, else (after
// init_parallel_env in a world of one) a group of one rank. StateError otherwise.
Group& resolve_group(Group* group);
}  // namespace detail

}  // namespace crew::dist
