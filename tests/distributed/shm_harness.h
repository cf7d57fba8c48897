#pragma once
// Test helpers of the shm backend tests: a Store over files in a temporary directory (works
// across fork()ed processes without a server), run_ranks (tests/testing/multiprocess.h) with
// one such store shared by the ranks, unique job ids and a look into /dev/shm.
#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "crew/core/check.h"
#include "crew/core/timer.h"
#include "crew/distributed/backends/shm/shm_process_group.h"
#include "crew/distributed/store/store.h"
#include "tests/testing/multiprocess.h"
#include "tests/testing/store_ptr.h"
#include "tests/testing/temp_dir.h"

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

// Forks `world` ranks (crew::testing::run_ranks: each under the hard deadline
// options.timeout, a rank that hangs is killed and fails) that share a FileStore in a fresh
// temporary directory; each runs fn(rank, store).
inline std::vector<RankResult> run_ranks(int world, const std::function<void(int, dist::Store&)>& fn,
                                         const RunRanksOptions& options = {}) {
  TempDir dir;
  return crew::testing::run_ranks(
      world,
      [&](int rank, int) {
        FileStore store(dir.path());
        fn(rank, store);
      },
      options);
}

// This rank's shm group over `store`, with these options and per-collective timeout.
inline std::shared_ptr<dist::ProcessGroup> make_shm_group(
    dist::Store& store, int rank, int world, const dist::ShmOptions& shm,
    std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
  dist::ProcessGroupOptions options;
  options.timeout = timeout;
  return dist::create_shm_process_group(borrow_store(store), rank, world, options, shm);
}

// Sets a CREW_JOB_ID unique to this call ("<tag><pid>x<n>"); returns the prefix of the names
// its shm segments get in /dev/shm.
inline std::string set_unique_job(const std::string& tag) {
  static int counter = 0;
  const std::string job = tag + std::to_string(::getpid()) + "x" + std::to_string(counter++);
  ::setenv("CREW_JOB_ID", job.c_str(), 1);
  return std::string(dist::shm_segment_prefix()) + job + "-";
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

}  // namespace crew::testing::shm
