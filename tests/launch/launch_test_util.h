#pragma once
// Helpers for the launcher tests: run the built `crew` command as a child with a hard timeout,
// capture its output, and look for processes of a job in /proc. Header-only: the suite
// globs only *_test.cpp.
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/types.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "crew/core/spawn_process.h"
#include "tests/testing/net.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/text.h"

namespace crew::launch::testing {

using crew::testing::free_port;
using crew::testing::has;
using crew::testing::read_file;
using crew::testing::TempDir;

struct CrewRun {
  int code = -1;  // exit status (128 + signal for a signal death)
  std::string stdout_text;
  std::string stderr_text;
  std::string output;  // stdout then stderr
};

// Starts `crew ARGS...` with extra "KEY=VALUE" environment entries; stdout/stderr go to files.
class CrewProcess {
 public:
  CrewProcess(const TempDir& dir, const std::vector<std::string>& args,
              const std::vector<std::string>& env = {}) {
    static int counter = 0;
    const std::string tag = std::to_string(++counter);
    out_path_ = dir.file("crew.stdout." + tag);
    err_path_ = dir.file("crew.stderr." + tag);
    int out = ::open(out_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int err = ::open(err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    dist::ChildOptions o;
    o.argv = {CREW_CLI_PATH};
    o.argv.insert(o.argv.end(), args.begin(), args.end());
    o.env = dist::current_environment();
    for (const char* k : {"CREW_RANK", "CREW_WORLD_SIZE", "PADDLE_TRAINER_ID", "PADDLE_MASTER",
                          "PADDLE_NNODES", "CUDA_VISIBLE_DEVICES", "CREW_JOB_TOKEN", "CREW_LAUNCH_TOKEN"}) {
      dist::unset_env_entry(&o.env, k);
    }
    for (const auto& e : env) {
      auto eq = e.find('=');
      dist::set_env_entry(&o.env, e.substr(0, eq), e.substr(eq + 1));
    }
    o.stdout_fd = out;
    o.stderr_fd = err;
    child_ = dist::ChildProcess::start(o);
    ::close(out);
    ::close(err);
  }
  pid_t pid() const { return child_.pid(); }
  const std::string& stderr_path() const { return err_path_; }
  void signal(int sig) const { ::kill(child_.pid(), sig); }

  // Waits up to `timeout`; on timeout kills the launcher's group and fails the test.
  CrewRun wait(std::chrono::milliseconds timeout = std::chrono::seconds(60)) {
    CrewRun r;
    const auto& st = child_.wait_for(timeout);
    if (!st) {
      ADD_FAILURE() << "crew did not finish within " << timeout.count() << " ms; killing it";
      child_.terminate(std::chrono::milliseconds(0));
    }
    r.code = child_.status()->shell_code();
    r.stdout_text = read_file(out_path_);
    r.stderr_text = read_file(err_path_);
    r.output = r.stdout_text + r.stderr_text;
    return r;
  }

 private:
  dist::ChildProcess child_;
  std::string out_path_;
  std::string err_path_;
};

inline CrewRun run_crew(const TempDir& dir, const std::vector<std::string>& args,
                        const std::vector<std::string>& env = {},
                        std::chrono::milliseconds timeout = std::chrono::seconds(60)) {
  CrewProcess p(dir, args, env);
  return p.wait(timeout);
}

inline bool wait_for_text(const std::string& path, const std::string& needle,
                          std::chrono::milliseconds timeout) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < end) {
    if (read_file(path).find(needle) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// Pids of live (non-zombie) processes whose environment holds CREW_JOB_ID=<job_id>.
inline std::vector<pid_t> processes_of_job(const std::string& job_id) {
  std::vector<pid_t> out;
  const std::string needle = "CREW_JOB_ID=" + job_id;
  DIR* dir = ::opendir("/proc");
  if (!dir) return out;
  while (dirent* e = ::readdir(dir)) {
    pid_t pid = static_cast<pid_t>(std::atoi(e->d_name));
    if (pid <= 0) continue;
    std::string base = std::string("/proc/") + e->d_name;
    std::string stat = read_file(base + "/stat");
    size_t close = stat.rfind(')');
    if (close == std::string::npos || close + 2 >= stat.size() || stat[close + 2] == 'Z') continue;
    std::string environ = read_file(base + "/environ");
    size_t start = 0;
    while (start < environ.size()) {
      size_t end = environ.find('\0', start);
      if (end == std::string::npos) end = environ.size();
      if (environ.compare(start, end - start, needle) == 0) {
        out.push_back(pid);
        break;
      }
      start = end + 1;
    }
  }
  ::closedir(dir);
  return out;
}

inline std::vector<pid_t> wait_job_gone(const std::string& job_id, std::chrono::milliseconds timeout) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  std::vector<pid_t> left = processes_of_job(job_id);
  while (!left.empty() && std::chrono::steady_clock::now() < end) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    left = processes_of_job(job_id);
  }
  return left;
}

inline int count(const std::string& text, const std::string& needle) {
  int n = 0;
  for (size_t pos = text.find(needle); pos != std::string::npos; pos = text.find(needle, pos + needle.size()))
    ++n;
  return n;
}

}  // namespace crew::launch::testing
