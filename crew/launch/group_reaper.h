#pragma once
// GroupReaper: a tiny helper process that kills the workers' process groups if the launcher
// dies without cleaning up (SIGKILL, a crash). PR_SET_PDEATHSIG takes the workers down with
// the launcher, but not their own children; the reaper, forked before anything else, notices
// the launcher's end as EOF on a pipe and sends SIGKILL to every group still registered.
// On a clean exit the launcher says so first and the reaper kills nothing.
#include <sys/types.h>

namespace crew::launch {

class GroupReaper {
 public:
  // Forks the helper (async-signal-safe calls only in it, so threads in the launcher are fine).
  GroupReaper();
  // Tells the helper the launcher ends cleanly, and reaps it.
  ~GroupReaper();
  GroupReaper(const GroupReaper&) = delete;
  GroupReaper& operator=(const GroupReaper&) = delete;

  // Kill this process group if the launcher dies.
  void watch(pid_t pgid);
  // The group is gone (its leader was reaped and the rest killed); forget it.
  void forget(pid_t pgid);

 private:
  void send(char op, pid_t pgid);

  int write_fd_ = -1;
  pid_t pid_ = -1;
};

}  // namespace crew::launch
