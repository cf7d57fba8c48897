#pragma once
// ChildProcess: a fork+exec'd child owned by RAII, used by crew::dist::spawn and the launcher.
//
//   ChildOptions o;
//   o.argv = {"/bin/sh", "-c", "echo hi"};
//   o.env = current_environment();
//   ChildProcess child = ChildProcess::start(o);       // SpawnError if exec fails
//   ExitStatus st = child.terminate(std::chrono::seconds(5));
//
// Between fork and exec the child calls only async-signal-safe functions, so starting a
// child is safe in a program that already runs threads (OpenMP, oneDNN, gloo). Every child
// gets its own process group and PR_SET_PDEATHSIG(SIGKILL), so it dies with its parent even
// when the parent is killed with SIGKILL.
#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace crew::dist {

// How a child ended.
struct ExitStatus {
  bool signaled = false;  // true: killed by `signal`; false: exited with `code`
  int code = 0;
  int signal = 0;

  // Shell convention: the exit code, or 128 + signal for a signal death.
  int shell_code() const { return signaled ? 128 + signal : code; }
  bool success() const { return !signaled && code == 0; }
  // "exit code 3" or "signal SIGKILL (9)".
  std::string describe() const;
  static ExitStatus from_wait_status(int status);
};

// Settings for ChildProcess::start.
struct ChildOptions {
  std::vector<std::string> argv;  // argv[0] is the program; without '/' it is searched in PATH
  std::string path;               // the file to exec instead of argv[0] ("" = argv[0])
  std::vector<std::string> env;   // the child's whole environment, "KEY=VALUE" entries
  int stdout_fd = -1;             // -1: inherit the parent's
  int stderr_fd = -1;             // -1: inherit the parent's (may equal stdout_fd)
  std::vector<int> keep_fds;      // extra descriptors the child keeps (close-on-exec cleared)
  bool new_process_group = true;  // setpgid(0, 0): signals can reach the child's whole tree
  bool die_with_parent = true;    // PR_SET_PDEATHSIG(SIGKILL)
  std::vector<int> cpus;          // sched_setaffinity to these CPUs; empty: inherit
};

// A running (or finished, not yet destroyed) child process.
class ChildProcess {
 public:
  // Forks and execs; throws SpawnError naming the program and errno when exec fails.
  static ChildProcess start(const ChildOptions& options);

  ChildProcess() = default;
  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&& other) noexcept;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  // A child still running is killed (SIGKILL to its group) and reaped.
  ~ChildProcess();

  pid_t pid() const { return pid_; }
  bool started() const { return pid_ > 0; }
  bool running() const { return pid_ > 0 && !status_; }
  const std::optional<ExitStatus>& status() const { return status_; }

  // Reaps the child if it has ended (no waiting); returns its status once it has.
  const std::optional<ExitStatus>& poll();
  // Waits up to `timeout` for the child to end.
  const std::optional<ExitStatus>& wait_for(std::chrono::milliseconds timeout);
  // Sends sig to the child's process group (or to the child alone without one).
  void signal_group(int sig) const;
  // SIGTERM to the group, up to `grace` to end, then SIGKILL to the group; always reaps.
  ExitStatus terminate(std::chrono::milliseconds grace);

 private:
  pid_t pid_ = -1;
  bool own_group_ = false;
  std::optional<ExitStatus> status_;
};

// The current process's environment as "KEY=VALUE" entries.
std::vector<std::string> current_environment();
// Sets (or replaces) KEY in a "KEY=VALUE" list.
void set_env_entry(std::vector<std::string>* env, const std::string& key, const std::string& value);
// Removes KEY from a "KEY=VALUE" list.
void unset_env_entry(std::vector<std::string>* env, const std::string& key);
// Resolves a program name through PATH as execvp would; throws SpawnError when not found.
std::string resolve_program(const std::string& program);

}  // namespace crew::dist
