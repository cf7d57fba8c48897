#include "tests/testing/multiprocess.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <exception>
#include <thread>

namespace crew::testing {
namespace {

void write_all(int fd, const std::string& s) {
  size_t done = 0;
  while (done < s.size()) {
    ssize_t n = ::write(fd, s.data() + done, s.size() - done);
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

}  // namespace

std::vector<RankResult> run_ranks(int world, const std::function<void(int rank, int world)>& fn,
                                  const RunRanksOptions& options) {
  std::vector<RankResult> results(world);
  std::vector<pid_t> pids(world, -1);
  std::vector<int> pipes(world, -1);
  std::fflush(nullptr);
  const pid_t parent = ::getpid();
  for (int r = 0; r < world; ++r) {
    results[r].rank = r;
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) {
      results[r].error = "pipe failed";
      continue;
    }
    pid_t pid = ::fork();
    if (pid == 0) {
      ::close(fds[0]);
      // Own process group, so a timeout kills what the child started too; and die with the
      // test binary (a ctest timeout SIGKILLs only the parent).
      ::setpgid(0, 0);
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) ::_exit(3);  // the parent died before prctl
      for (auto& [k, v] : options.env) ::setenv(k.c_str(), v.c_str(), 1);
      if (options.set_rank_env) {
        ::setenv("CREW_RANK", std::to_string(r).c_str(), 1);
        ::setenv("CREW_WORLD_SIZE", std::to_string(world).c_str(), 1);
        ::setenv("CREW_LOCAL_RANK", std::to_string(r).c_str(), 1);
        ::setenv("CREW_LOCAL_WORLD_SIZE", std::to_string(world).c_str(), 1);
      }
      int code = 0;
      try {
        fn(r, world);
      } catch (const std::exception& e) {
        write_all(fds[1], e.what());
        code = 1;
      } catch (...) {
        write_all(fds[1], "unknown exception");
        code = 1;
      }
      std::fflush(nullptr);
      ::close(fds[1]);
      ::_exit(code);
    }
    ::close(fds[1]);
    if (pid < 0) {
      results[r].error = "fork failed";
      ::close(fds[0]);
      continue;
    }
    ::setpgid(pid, pid);                   // also here: no race with a kill of the group at the deadline
    ::fcntl(fds[0], F_SETFL, O_NONBLOCK);  // a grandchild holding the pipe must not block the drain
    pids[r] = pid;
    pipes[r] = fds[0];
  }
  const auto deadline = std::chrono::steady_clock::now() + options.timeout;
  int remaining = 0;
  for (pid_t p : pids) remaining += p > 0;
  std::vector<bool> done(world, false);
  while (remaining > 0) {
    // Drain the pipes so a chatty child never blocks on a full pipe.
    for (int r = 0; r < world; ++r) {
      if (pipes[r] < 0) continue;
      pollfd pfd{pipes[r], POLLIN, 0};
      while (::poll(&pfd, 1, 0) > 0 && (pfd.revents & POLLIN)) {
        char buf[4096];
        ssize_t n = ::read(pipes[r], buf, sizeof(buf));
        if (n <= 0) break;
        results[r].error.append(buf, static_cast<size_t>(n));
      }
    }
    for (int r = 0; r < world; ++r) {
      if (pids[r] <= 0 || done[r]) continue;
      int status = 0;
      pid_t w = ::waitpid(pids[r], &status, WNOHANG);
      if (w == pids[r]) {
        done[r] = true;
        --remaining;
        if (WIFEXITED(status)) results[r].exit_code = WEXITSTATUS(status);
        if (WIFSIGNALED(status)) results[r].signal = WTERMSIG(status);
      }
    }
    if (remaining == 0) break;
    if (std::chrono::steady_clock::now() >= deadline) {
      for (int r = 0; r < world; ++r) {
        if (pids[r] > 0 && !done[r]) {
          ::kill(-pids[r], SIGKILL);  // the child's whole process group
          ::kill(pids[r], SIGKILL);
          ::waitpid(pids[r], nullptr, 0);
          results[r].timed_out = true;
          done[r] = true;
        }
      }
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  for (int r = 0; r < world; ++r) {
    if (pipes[r] < 0) continue;
    char buf[4096];
    ssize_t n;
    while ((n = ::read(pipes[r], buf, sizeof(buf))) > 0) results[r].error.append(buf, static_cast<size_t>(n));
    ::close(pipes[r]);
  }
  return results;
}

std::string describe(const RankResult& r) {
  std::string s = "rank " + std::to_string(r.rank) + ": ";
  if (r.timed_out)
    s += "timed out (killed)";
  else if (r.signal)
    s += std::string("killed by signal ") + strsignal(r.signal);
  else
    s += "exit code " + std::to_string(r.exit_code);
  if (!r.error.empty()) s += ": " + r.error;
  return s;
}

void expect_all_ok(const std::vector<RankResult>& results) {
  for (const auto& r : results) EXPECT_TRUE(r.ok()) << describe(r);
}

}  // namespace crew::testing
