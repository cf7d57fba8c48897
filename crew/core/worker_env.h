#pragma once
// The whole environment a starter (crew launch, C++ spawn, Python spawn) gives one worker: its
// ParallelEnv's variables (ParallelEnv::to_env) and the few only a starter sets. The one owner
// of those names: launch, spawn and, through the binding, the Python package build a WorkerEnv
// and apply it, so the same rank and job give the same variables whichever started it
// (docs/launch.md "What each worker gets", docs/environment.md).
//
//   WorkerEnv w;
//   w.parallel = ...;           // rank, world size, store, token, devices
//   w.num_threads = 4;
//   child.env = worker_environment(current_environment(), w);
#include <string>
#include <vector>

#include "crew/core/parallel_env.h"

namespace crew {

// The marker by which crew's C++ start-up hook knows a child of C++ spawn
// (crew/distributed/spawn/spawn_child.cpp). Every worker environment unsets it; C++ spawn
// sets it again for its own children only.
inline constexpr const char* kSpawnChildVar = "CREW_SPAWN_CHILD";

struct WorkerEnv {
  ParallelEnv parallel;
  // CREW_STORE_HOSTED=1: the starter serves the job's store (launch, C++ spawn); false: rank 0
  // hosts it (Python spawn), and a starter's own CREW_STORE_HOSTED does not reach the worker.
  bool store_hosted = true;
  // CREW_NUM_THREADS and OMP_NUM_THREADS, each unless the starter's environment sets it.
  int num_threads = 1;
  std::string log_dir;             // PADDLE_LOG_DIR ("" = leave the starter's)
  std::vector<int> comm_cpus;      // CREW_COMM_CPUS unless set (pinned workers; empty = leave)
  std::string host;                // CREW_HOST unless set: the address Gloo binds ("" = leave)
  bool python_unbuffered = false;  // PYTHONUNBUFFERED=1 unless set (workers writing to a pipe)

  // The variables to set on top of `base` (the starter's environment, "KEY=VALUE"); an empty
  // value unsets the variable.
  std::vector<EnvVar> to_env(const std::vector<std::string>& base) const;
};

// `base` with w.to_env(base) applied.
std::vector<std::string> worker_environment(const std::vector<std::string>& base, const WorkerEnv& w);

}  // namespace crew
