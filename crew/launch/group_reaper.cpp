#include "crew/launch/group_reaper.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "crew/core/check.h"

namespace crew::launch {
namespace {

constexpr int kMaxGroups = 4096;
constexpr size_t kRecord = 1 + sizeof(int32_t);

// The helper's loop: async-signal-safe calls only (it is a fork of a possibly threaded process).
[[noreturn]] void reaper_main(int read_fd) {
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE}) ::signal(sig, SIG_IGN);
  static int32_t groups[kMaxGroups];
  int n = 0;
  char rec[kRecord];
  size_t have = 0;
  while (true) {
    ssize_t r = ::read(read_fd, rec + have, kRecord - have);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;  // the launcher is gone without saying goodbye
    have += static_cast<size_t>(r);
    if (have < kRecord) continue;
    have = 0;
    int32_t pgid;
    std::memcpy(&pgid, rec + 1, sizeof(pgid));
    if (rec[0] == 'Q') ::_exit(0);
    if (rec[0] == 'W' && n < kMaxGroups) groups[n++] = pgid;
    if (rec[0] == 'F') {
      for (int i = 0; i < n; ++i) {
        if (groups[i] == pgid) groups[i] = groups[--n];
      }
    }
  }
  for (int i = 0; i < n; ++i) ::kill(-groups[i], SIGKILL);
  ::_exit(0);
}

}  // namespace

GroupReaper::GroupReaper() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) CREW_THROW(IOError, errno_message("launch: reaper pipe"));
  pid_t pid = ::fork();
  if (pid < 0) {
    int err = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    CREW_THROW(SpawnError, errno_message("launch: fork reaper", err));
  }
  if (pid == 0) {
    ::close(fds[1]);
    ::setpgid(0, 0);  // not in the launcher's group: a Ctrl-C or killpg of the launcher spares it
    reaper_main(fds[0]);
  }
  ::close(fds[0]);
  write_fd_ = fds[1];
  pid_ = pid;
}

GroupReaper::~GroupReaper() {
  send('Q', 0);
  ::close(write_fd_);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
}

void GroupReaper::send(char op, pid_t pgid) {
  char rec[kRecord];
  rec[0] = op;
  int32_t v = static_cast<int32_t>(pgid);
  std::memcpy(rec + 1, &v, sizeof(v));
  ssize_t r;
  do {
    r = ::write(write_fd_, rec, sizeof(rec));  // < PIPE_BUF: atomic
  } while (r < 0 && errno == EINTR);
}

void GroupReaper::watch(pid_t pgid) { send('W', pgid); }
void GroupReaper::forget(pid_t pgid) { send('F', pgid); }

}  // namespace crew::launch
