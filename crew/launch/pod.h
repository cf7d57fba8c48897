#pragma once
// Pod: the workers one launcher runs on its node for one generation of the job, with their
// logs, the watch loop and the stop sequence (SIGTERM to every worker's process group, a
// grace period, then SIGKILL to the groups, and every child reaped).
//
//   Pod pod(spec);
//   pod.start();
//   PodOutcome out = pod.watch(signals, [] { return false; });
//   if (out.state != PodState::COMPLETED) pod.stop(spec.grace_period);
#include <signal.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "crew/core/spawn_process.h"
#include "crew/launch/group_reaper.h"
#include "crew/launch/options.h"
#include "crew/launch/signals.h"
#include "crew/launch/worker_output.h"

namespace crew::launch {

struct WorkerSpec {
  int local_rank = 0;
  int global_rank = 0;
  std::vector<std::string> env;  // the whole environment, "KEY=VALUE"
  std::vector<int> cpus;         // affinity; empty = inherit
};

struct PodSpec {
  std::vector<std::string> command;  // program and its arguments
  std::vector<WorkerSpec> workers;
  std::string log_dir;
  bool log_overwrite = false;
  std::string log_header;  // written to each workerlog before this generation's output
  ConsoleRanks console;    // local rank 0
  bool worker_tty = true;  // a pseudo-terminal per worker (WorkerOutputOptions::tty)
};

enum class PodState {
  COMPLETED,    // every worker exited 0
  FAILED,       // a worker exited non-zero or died on a signal
  INTERRUPTED,  // the launcher got SIGINT/SIGTERM/SIGHUP
  ABORTED,      // the abort callback asked to stop (another node failed)
};

struct PodOutcome {
  PodState state = PodState::COMPLETED;
  int local_rank = -1;  // FAILED: the first worker that failed
  int global_rank = -1;
  pid_t pid = -1;
  dist::ExitStatus status;  // FAILED: how it ended
  int signal = 0;           // INTERRUPTED: the signal
};

class Pod {
 public:
  static constexpr int kPollIntervalMs = 50;

  // `reaper` (may be null) learns every worker's process group.
  Pod(PodSpec spec, GroupReaper* reaper);
  ~Pod();
  Pod(const Pod&) = delete;
  Pod& operator=(const Pod&) = delete;

  // Writes envlog.N and starts every worker; a worker that cannot start stops the others and
  // rethrows (SpawnError naming the program).
  void start();
  // Pumps output and reaps workers until all completed, one failed, a terminating signal
  // arrived, or `abort()` (checked about every 100 ms) returned true.
  PodOutcome watch(SignalPipe& signals, const std::function<bool()>& abort);
  // SIGTERM to every running worker's group, up to `grace`, then SIGKILL; reaps all and
  // drains their output. Returns once no worker process is left. With `signals`, a further
  // terminating signal during the grace period skips to SIGKILL. `first` is the signal sent
  // first (the launcher forwards the SIGINT/SIGTERM it got).
  void stop(std::chrono::milliseconds grace, SignalPipe* signals = nullptr, int first = SIGTERM);

  std::vector<pid_t> pids() const;
  std::string log_path(int local_rank) const;
  std::string log_tail(int local_rank, int max_lines) const;
  int size() const { return static_cast<int>(spec_.workers.size()); }

 private:
  // Polls the pipes up to timeout_ms and copies output; reaps finished children.
  void pump_once(int timeout_ms, int extra_fd);

  PodSpec spec_;
  GroupReaper* reaper_;
  std::vector<std::unique_ptr<WorkerOutput>> outputs_;
  std::vector<dist::ChildProcess> children_;
};

}  // namespace crew::launch
