#include "crew/launch/signals.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>

#include "crew/core/check.h"

namespace crew::launch {
namespace {

constexpr int kSignals[4] = {SIGINT, SIGTERM, SIGHUP, SIGCHLD};
std::atomic<int> g_write_fd{-1};

void on_signal(int sig) {
  int saved = errno;
  unsigned char byte = static_cast<unsigned char>(sig);
  int fd = g_write_fd.load();
  if (fd >= 0) {
    ssize_t ignored = ::write(fd, &byte, 1);
    (void)ignored;
  }
  errno = saved;
}

}  // namespace

SignalPipe::SignalPipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) CREW_THROW(IOError, errno_message("launch: signal pipe"));
  read_fd_ = fds[0];
  int expected = -1;
  CREW_CHECK_T(StateError, g_write_fd.compare_exchange_strong(expected, fds[1]),
               "launch: only one SignalPipe may exist at a time");
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  for (int i = 0; i < 4; ++i) ::sigaction(kSignals[i], &sa, &old_[i]);
}

SignalPipe::~SignalPipe() {
  for (int i = 0; i < 4; ++i) ::sigaction(kSignals[i], &old_[i], nullptr);
  int w = g_write_fd.exchange(-1);
  if (w >= 0) ::close(w);
  ::close(read_fd_);
}

int SignalPipe::drain() {
  unsigned char buf[64];
  ssize_t n;
  while ((n = ::read(read_fd_, buf, sizeof(buf))) > 0) {
    for (ssize_t i = 0; i < n; ++i) {
      if (buf[i] == SIGCHLD) continue;
      if (terminating_ == 0) terminating_ = buf[i];
      ++count_;
    }
  }
  return terminating_;
}

}  // namespace crew::launch
