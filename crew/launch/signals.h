#pragma once
// SignalPipe: turns SIGINT, SIGTERM, SIGHUP and SIGCHLD into bytes on a pipe the launcher's
// event loop polls (the self-pipe trick), and restores the old handlers when destroyed.
#include <signal.h>

namespace crew::launch {

class SignalPipe {
 public:
  SignalPipe();
  ~SignalPipe();
  SignalPipe(const SignalPipe&) = delete;
  SignalPipe& operator=(const SignalPipe&) = delete;

  // Descriptor to poll for POLLIN.
  int fd() const { return read_fd_; }
  // Reads what has arrived; returns the first terminating signal (SIGINT/SIGTERM/SIGHUP) seen
  // since construction, or 0. SIGCHLD only wakes the loop.
  int drain();
  // The first terminating signal received, or 0.
  int terminating_signal() const { return terminating_; }
  // How many terminating signals arrived (a second one means "stop now").
  int terminating_count() const { return count_; }

 private:
  int read_fd_ = -1;
  int terminating_ = 0;
  int count_ = 0;
  struct sigaction old_[4];
};

}  // namespace crew::launch
