#include "crew/core/worker_stdio.h"

#include <signal.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>

namespace crew {
namespace {

constexpr int kFatalSignals[] = {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL};

// fflush is not async-signal-safe. As glog does, flush anyway, best effort: ftrylockfile never
// blocks, so a stream locked by another thread is skipped instead of deadlocking the dying
// process (the lock is recursive, so a crash inside stdio on this thread still flushes).
void flush_stream(FILE* f) {
  if (::ftrylockfile(f) != 0) return;
  ::fflush_unlocked(f);
  ::funlockfile(f);
}

void flush_and_reraise(int sig) {
  flush_stream(stdout);
  flush_stream(stderr);
  // SA_RESETHAND restored the default action and SA_NODEFER lets it act now.
  ::raise(sig);
}

void install_fatal_flush() {
  for (int sig : kFatalSignals) {
    struct sigaction old {};
    if (::sigaction(sig, nullptr, &old) != 0 || old.sa_handler != SIG_DFL) continue;
    struct sigaction sa {};
    sa.sa_handler = flush_and_reraise;
    sa.sa_flags = SA_RESETHAND | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    ::sigaction(sig, &sa, nullptr);
  }
}

struct WorkerStdioHook {
  WorkerStdioHook() { setup_worker_stdio(); }
};
WorkerStdioHook g_worker_stdio_hook;

}  // namespace

bool setup_worker_stdio() {
  static std::atomic<bool> done{false};
  if (!std::getenv("CREW_RANK")) return false;
  if (done.exchange(true)) return true;
  // Before main, so (almost always) before any output on the stream.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  install_fatal_flush();
  return true;
}

}  // namespace crew

extern "C" void crew_worker_stdio_anchor() {}
