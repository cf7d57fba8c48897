#pragma once
// Test helpers of the shm backend tests: a Store over files in a temporary directory (works
// across fork()ed processes without a server) and a runner that forks one process per rank
// under a hard deadline, killing them all if it passes.
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "crew/core/check.h"
#include "crew/core/timer.h"
#include "crew/distributed/store/store.h"

namespace crew::testing::shm {

// A Store whose keys are files of one directory; add/compare_set hold an flock.
class FileStore final : public dist::Store {
 public:
  explicit FileStore(std::string dir, std::chrono::milliseconds timeout = std::chrono::seconds(30))
      : Store(timeout), dir_(std::move(dir)) {}

  void set(const std::string& key, const std::vector<uint8_t>& value) override {
    Lock lock(dir_);
    write_file(key, value);
  }
  std::vector<uint8_t> get(const std::string& key) override {
    wait({key}, timeout());
    return read_file(key);
  }
  int64_t add(const std::string& key, int64_t delta) override {
    Lock lock(dir_);
    int64_t v = 0;
    if (exists(key)) {
      auto bytes = read_file(key);
      v = std::stoll(std::string(bytes.begin(), bytes.end()));
    }
    v += delta;
    std::string s = std::to_string(v);
    write_file(key, std::vector<uint8_t>(s.begin(), s.end()));
    return v;
  }
  std::vector<uint8_t> compare_set(const std::string& key, const std::vector<uint8_t>& expected,
                                   const std::vector<uint8_t>& desired) override {
    Lock lock(dir_);
    if (!exists(key)) {
      if (expected.empty()) write_file(key, desired);
      return expected.empty() ? desired : std::vector<uint8_t>{};
    }
    auto cur = read_file(key);
    if (cur == expected) {
      write_file(key, desired);
      return desired;
    }
    return cur;
  }
  bool check(const std::vector<std::string>& keys) override {
    for (const auto& k : keys) {
      if (!exists(k)) return false;
    }
    return true;
  }
  bool delete_key(const std::string& key) override { return ::unlink(path(key).c_str()) == 0; }
  int64_t num_keys() override {
    int64_t n = 0;
    if (DIR* d = ::opendir(dir_.c_str())) {
      while (dirent* e = ::readdir(d)) n += e->d_name[0] == 'k';
      ::closedir(d);
    }
    return n;
  }
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override {
    Deadline deadline(timeout);
    while (!check(keys)) {
      CREW_CHECK_T(TimeoutError, !deadline.expired(), "FileStore: timed out waiting for key ", keys[0]);
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }

 private:
  struct Lock {
    int fd;
    explicit Lock(const std::string& dir) : fd(::open((dir + "/lock").c_str(), O_CREAT | O_RDWR, 0600)) {
      ::flock(fd, LOCK_EX);
    }
    ~Lock() { ::close(fd); }
  };
  std::string path(const std::string& key) const {
    std::string name = "k";
    char buf[3];
    for (unsigned char c : key) {
      std::snprintf(buf, sizeof buf, "%02x", c);
      name += buf;
    }
    return dir_ + "/" + name;
  }
  bool exists(const std::string& key) const { return ::access(path(key).c_str(), F_OK) == 0; }
  void write_file(const std::string& key, const std::vector<uint8_t>& value) {
    std::string tmp = path(key) + ".tmp";
    {
      std::ofstream out(tmp, std::ios::binary);
      out.write(reinterpret_cast<const char*>(value.data()), static_cast<std::streamsize>(value.size()));
    }
    ::rename(tmp.c_str(), path(key).c_str());
  }
  std::vector<uint8_t> read_file(const std::string& key) const {
    std::ifstream in(path(key), std::ios::binary);
    return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  std::string dir_;
};

// A fresh directory under /tmp, removed (with its files) at scope exit.
class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/crew-shm-test-XXXXXX";
    CREW_CHECK(::mkdtemp(tmpl) != nullptr, "mkdtemp failed");
    path_ = tmpl;
  }
  ~TempDir() {
    if (DIR* d = ::opendir(path_.c_str())) {
      while (dirent* e = ::readdir(d)) {
        if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) {
          ::unlink((path_ + "/" + e->d_name).c_str());
        }
      }
      ::closedir(d);
    }
    ::rmdir(path_.c_str());
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// How one rank's process ended.
struct RankResult {
  int exit_code = -1;  // when it exited
  int signal = 0;      // when a signal killed it
  bool timed_out = false;
  bool ok() const { return exit_code == 0 && signal == 0 && !timed_out; }
};

// Forks `world` processes running fn(rank, store); a rank exits 0 when fn returns, 1 (after
// printing the error) when it throws. All are SIGKILLed after `timeout`.
inline std::vector<RankResult> run_ranks(int world, const std::function<void(int, dist::Store&)>& fn,
                                         std::chrono::milliseconds timeout = std::chrono::seconds(60)) {
  TempDir dir;
  std::fflush(nullptr);
  std::vector<pid_t> pids(world, -1);
  for (int r = 0; r < world; ++r) {
    pid_t pid = ::fork();
    CREW_CHECK(pid >= 0, "fork failed");
    if (pid == 0) {
      int code = 0;
      try {
        FileStore store(dir.path());
        fn(r, store);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "rank %d failed: %s\n", r, e.what());
        code = 1;
      }
      std::fflush(nullptr);
      ::_exit(code);
    }
    pids[r] = pid;
  }
  std::vector<RankResult> results(world);
  int left = world;
  Deadline deadline(timeout);
  while (left > 0) {
    for (int r = 0; r < world; ++r) {
      if (pids[r] < 0) continue;
      int status = 0;
      if (::waitpid(pids[r], &status, WNOHANG) == pids[r]) {
        if (WIFEXITED(status)) results[r].exit_code = WEXITSTATUS(status);
        if (WIFSIGNALED(status)) results[r].signal = WTERMSIG(status);
        pids[r] = -1;
        --left;
      }
    }
    if (left > 0 && deadline.expired()) {
      for (int r = 0; r < world; ++r) {
        if (pids[r] < 0) continue;
        ::kill(pids[r], SIGKILL);
        ::waitpid(pids[r], nullptr, 0);
        results[r].timed_out = true;
        pids[r] = -1;
      }
      left = 0;
    }
    if (left > 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return results;
}

// Names in /dev/shm that start with `prefix`.
inline std::vector<std::string> shm_entries(const std::string& prefix) {
  std::vector<std::string> out;
  if (DIR* d = ::opendir("/dev/shm")) {
    while (dirent* e = ::readdir(d)) {
      if (std::strncmp(e->d_name, prefix.c_str(), prefix.size()) == 0) out.push_back(e->d_name);
    }
    ::closedir(d);
  }
  return out;
}

// Throws with a message when cond is false (assertions inside forked ranks).
#define SHM_REQUIRE(cond, ...)                                                                           \
  do {                                                                                                   \
    if (!(cond)) CREW_THROW(InternalError, "requirement failed: " #cond " " __VA_OPT__(, ) __VA_ARGS__); \
  } while (0)

}  // namespace crew::testing::shm
