#include "crew/distributed/backends/shm/shm_sync.h"

#include <fcntl.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace crew::dist::detail {

void futex_wait(std::atomic<uint32_t>* word, uint32_t expected, std::chrono::microseconds timeout) {
  if (timeout.count() <= 0) return;
  struct timespec ts;
  ts.tv_sec = static_cast<time_t>(timeout.count() / 1000000);
  ts.tv_nsec = static_cast<long>(timeout.count() % 1000000) * 1000;
  // EAGAIN (value changed), EINTR and ETIMEDOUT all mean "look again".
  ::syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT, expected, &ts, nullptr, 0);
}

void futex_wake_all(std::atomic<uint32_t>* word) {
  ::syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

namespace {

// Reads /proc/<pid>/stat; returns false when the process has no entry.
bool read_stat(pid_t pid, char* state, uint64_t* start_time) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[1024];
  ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return false;
  buf[n] = '\0';
  // The command name may hold spaces and parentheses: fields restart after the last ')'.
  const char* p = std::strrchr(buf, ')');
  if (p == nullptr) return false;
  ++p;
  // Field 3 is the state; field 22 the start time.
  int field = 2;
  *state = '?';
  *start_time = 0;
  while (*p != '\0') {
    while (*p == ' ') ++p;
    if (*p == '\0') break;
    ++field;
    if (field == 3) *state = *p;
    if (field == 22) {
      *start_time = std::strtoull(p, nullptr, 10);
      return true;
    }
    while (*p != ' ' && *p != '\0') ++p;
  }
  return true;
}

}  // namespace

uint64_t process_start_time(pid_t pid) {
  char state;
  uint64_t start = 0;
  return read_stat(pid, &state, &start) ? start : 0;
}

Liveness process_liveness(pid_t pid, uint64_t start_time) {
  char state;
  uint64_t start = 0;
  if (!read_stat(pid, &state, &start)) return Liveness::DEAD;
  if (state == 'Z' || state == 'X' || state == 'x') return Liveness::ZOMBIE;
  if (start_time != 0 && start != start_time) return Liveness::REUSED;
  return Liveness::ALIVE;
}

const char* liveness_name(Liveness state) {
  switch (state) {
    case Liveness::ALIVE:
      return "alive";
    case Liveness::DEAD:
      return "died";
    case Liveness::ZOMBIE:
      return "died (zombie)";
    case Liveness::REUSED:
      return "died (its pid was reused)";
  }
  return "?";
}

}  // namespace crew::dist::detail
