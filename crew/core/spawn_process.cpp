#include "crew/core/spawn_process.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "crew/core/check.h"
#include "crew/core/timer.h"

extern char** environ;

namespace crew::dist {

std::string ExitStatus::describe() const {
  if (!signaled) return str_cat("exit code ", code);
  const char* abbrev = sigabbrev_np(signal);
  return str_cat("signal ", abbrev ? str_cat("SIG", abbrev) : std::string("unknown"), " (", signal, ")");
}

ExitStatus ExitStatus::from_wait_status(int status) {
  ExitStatus s;
  if (WIFSIGNALED(status)) {
    s.signaled = true;
    s.signal = WTERMSIG(status);
  } else {
    s.code = WEXITSTATUS(status);
  }
  return s;
}

std::vector<std::string> current_environment() {
  std::vector<std::string> out;
  for (char** e = environ; e && *e; ++e) out.emplace_back(*e);
  return out;
}

void set_env_entry(std::vector<std::string>* env, const std::string& key, const std::string& value) {
  unset_env_entry(env, key);
  env->push_back(key + "=" + value);
}

void unset_env_entry(std::vector<std::string>* env, const std::string& key) {
  const std::string prefix = key + "=";
  std::erase_if(*env, [&](const std::string& e) { return e.compare(0, prefix.size(), prefix) == 0; });
}

std::string resolve_program(const std::string& program) {
  CREW_CHECK_T(SpawnError, !program.empty(), "launch: no program given");
  auto executable = [](const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
  };
  if (program.find('/') != std::string::npos) {
    CREW_CHECK_T(SpawnError, executable(program), "cannot execute program '", program,
                 "': ", ::access(program.c_str(), F_OK) == 0 ? "not an executable file" : "no such file");
    return program;
  }
  const char* path = ::getenv("PATH");
  std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::string dir = dirs.substr(start, end - start);
    std::string candidate = (dir.empty() ? "." : dir) + "/" + program;
    if (executable(candidate)) return candidate;
    start = end + 1;
  }
  CREW_THROW(SpawnError, "cannot execute program '", program, "': not found in PATH");
}

namespace {

// Writes an int to fd from the forked child (async-signal-safe).
void child_report_errno(int fd, int err) {
  ssize_t ignored = ::write(fd, &err, sizeof(err));
  (void)ignored;
}

// Everything the child touches, prepared before fork: the child allocates nothing.
struct ExecPlan {
  std::string path;
  std::vector<char*> argv;
  std::vector<char*> envp;
  cpu_set_t cpus;
  sigset_t empty_mask;

  explicit ExecPlan(const ChildOptions& options)
      : path(options.path.empty() ? resolve_program(options.argv[0]) : options.path) {
    for (const auto& a : options.argv) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    for (const auto& e : options.env) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
    CPU_ZERO(&cpus);
    for (int c : options.cpus) CPU_SET(c, &cpus);
    sigemptyset(&empty_mask);
  }
};

// The forked child: async-signal-safe calls only. Reports errno on err_fd if exec fails.
[[noreturn]] void exec_child(const ExecPlan& plan, const ChildOptions& options, int err_fd, pid_t parent) {
  if (options.new_process_group) ::setpgid(0, 0);
  if (options.die_with_parent) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(128 + SIGKILL);  // the parent died before prctl
  }
  if (!options.cpus.empty()) ::sched_setaffinity(0, sizeof(plan.cpus), &plan.cpus);
  for (int sig : {SIGINT, SIGTERM, SIGPIPE, SIGCHLD, SIGHUP, SIGQUIT}) ::signal(sig, SIG_DFL);
  ::sigprocmask(SIG_SETMASK, &plan.empty_mask, nullptr);
  const int redirects[][2] = {{options.stdout_fd, 1}, {options.stderr_fd, 2}};
  for (const auto& [from, to] : redirects) {
    if (from >= 0 && ::dup2(from, to) < 0) {
      child_report_errno(err_fd, errno);
      ::_exit(127);
    }
  }
  for (int fd : options.keep_fds) {
    int flags = ::fcntl(fd, F_GETFD);
    if (flags >= 0) ::fcntl(fd, F_SETFD, flags & ~FD_CLOEXEC);
  }
  ::execve(plan.path.c_str(), plan.argv.data(), plan.envp.data());
  child_report_errno(err_fd, errno);
  ::_exit(127);
}

// The child's exec errno from the close-on-exec pipe, or 0 when exec succeeded (EOF).
int read_exec_errno(int fd) {
  int child_errno = 0;
  ssize_t n;
  do {
    n = ::read(fd, &child_errno, sizeof(child_errno));
  } while (n < 0 && errno == EINTR);
  return n == static_cast<ssize_t>(sizeof(child_errno)) ? child_errno : 0;
}

}  // namespace

ChildProcess ChildProcess::start(const ChildOptions& options) {
  CREW_CHECK_T(SpawnError, !options.argv.empty(), "start child: empty argv");
  const ExecPlan plan(options);
  int err_pipe[2];
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) CREW_THROW(SpawnError, errno_message("start child: pipe2"));
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    int err = errno;
    ::close(err_pipe[0]);
    ::close(err_pipe[1]);
    CREW_THROW(SpawnError, errno_message(str_cat("start child '", plan.path, "': fork"), err));
  }
  if (pid == 0) {
    ::close(err_pipe[0]);
    exec_child(plan, options, err_pipe[1], parent);
  }
  ::close(err_pipe[1]);
  if (options.new_process_group) ::setpgid(pid, pid);  // also in the parent: no race with signal_group
  const int child_errno = read_exec_errno(err_pipe[0]);
  ::close(err_pipe[0]);

  ChildProcess child;
  child.pid_ = pid;
  child.own_group_ = options.new_process_group;
  if (child_errno != 0) {
    child.wait_for(std::chrono::seconds(5));
    CREW_THROW(SpawnError, errno_message(str_cat("cannot execute program '", plan.path, "'"), child_errno));
  }
  return child;
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : pid_(other.pid_), own_group_(other.own_group_), status_(other.status_) {
  other.pid_ = -1;
  other.status_.reset();
}

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
  if (this != &other) {
    if (running()) terminate(std::chrono::milliseconds(0));
    pid_ = other.pid_;
    own_group_ = other.own_group_;
    status_ = other.status_;
    other.pid_ = -1;
    other.status_.reset();
  }
  return *this;
}

ChildProcess::~ChildProcess() {
  try {
    if (running()) terminate(std::chrono::milliseconds(0));
  } catch (const Error&) {
    // A destructor must not throw; the child was sent SIGKILL already.
  }
}

const std::optional<ExitStatus>& ChildProcess::poll() {
  if (pid_ <= 0 || status_) return status_;
  int status = 0;
  pid_t r;
  do {
    r = ::waitpid(pid_, &status, WNOHANG);
  } while (r < 0 && errno == EINTR);
  if (r == pid_) {
    status_ = ExitStatus::from_wait_status(status);
    // The leader is gone, but the rest of its group may not be: do not leave them behind.
    if (own_group_) ::kill(-pid_, SIGKILL);
  } else if (r < 0) {
    // ECHILD: someone else reaped it; report it as lost rather than spin forever.
    status_ = ExitStatus{true, 0, SIGKILL};
  }
  return status_;
}

const std::optional<ExitStatus>& ChildProcess::wait_for(std::chrono::milliseconds timeout) {
  Deadline deadline(timeout);
  auto pause = std::chrono::microseconds(200);
  while (!poll() && !deadline.expired()) {
    std::this_thread::sleep_for(std::min<std::chrono::microseconds>(pause, deadline.remaining()));
    pause = std::min<std::chrono::microseconds>(pause * 2, std::chrono::milliseconds(10));
  }
  return status_;
}

void ChildProcess::signal_group(int sig) const {
  if (pid_ <= 0 || status_) return;
  if (own_group_ && ::kill(-pid_, sig) == 0) return;
  ::kill(pid_, sig);
}

ExitStatus ChildProcess::terminate(std::chrono::milliseconds grace) {
  CREW_INTERNAL_ASSERT(pid_ > 0, "terminate() on a child that was never started");
  if (!poll()) {
    if (grace.count() > 0) {
      signal_group(SIGTERM);
      wait_for(grace);
    }
    if (!status_) {
      signal_group(SIGKILL);
      wait_for(std::chrono::seconds(10));
    }
  }
  CREW_INTERNAL_ASSERT(status_.has_value(), "child ", pid_, " survived SIGKILL for 10 s");
  return *status_;
}

}  // namespace crew::dist
