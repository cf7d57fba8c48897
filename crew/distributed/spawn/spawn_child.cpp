// The child half of crew::dist::spawn: a static initialiser that, in a process spawn started,
// runs the requested function and exits before main (see spawn.h and docs/launch.md).
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>

#include "crew/core/check.h"
#include "crew/core/env.h"
#include "crew/core/timer.h"
#include "crew/core/worker_stdio.h"
#include "crew/distributed/spawn/spawn.h"
#include "crew/distributed/spawn/spawn_frame.h"
#include "crew/distributed/spawn/spawn_wire.h"

namespace crew::dist {
namespace detail {

// Offsets of spawned functions are taken from here; it lives in the executable with them.
__attribute__((noinline, used)) void spawn_anchor() { asm volatile(""); }

}  // namespace detail

namespace {

constexpr std::chrono::milliseconds kArgsTimeout{std::chrono::seconds(60)};
bool g_is_child = false;

bool read_exact(int fd, void* data, size_t size, Deadline& deadline) {
  char* p = static_cast<char*>(data);
  while (size > 0) {
    pollfd pfd{fd, POLLIN, 0};
    int r = ::poll(&pfd, 1, static_cast<int>(std::max<long long>(1, deadline.remaining().count())));
    if (r == 0 && deadline.expired()) return false;
    if (r < 0 && errno != EINTR) return false;
    if (r <= 0) continue;
    ssize_t n = ::read(fd, p, size);
    if (n == 0) return false;
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return false;
    }
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

void write_exact_impl(int fd, const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = ::send(fd, p, size, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;
    }
    p += n;
    size -= static_cast<size_t>(n);
  }
}

void send_report(int fd, SpawnReport::Kind kind, std::string payload) {
  const std::string frame = encode_report(SpawnReport{kind, std::move(payload)});
  write_exact_impl(fd, frame.data(), frame.size());
}

// In a spawned child: runs the entry named in the environment and exits, before main.
[[noreturn]] void run_child() {
  g_is_child = true;
  const int fd = static_cast<int>(env::get_int(detail::kSpawnFdVar, -1));
  long long entry_off = 0;
  long long fn_off = 0;
  const std::string entry_text = env::get_string(detail::kSpawnEntryVar, "");
  if (fd < 0 || std::sscanf(entry_text.c_str(), "%lld,%lld", &entry_off, &fn_off) != 2) {
    std::fprintf(stderr, "crew spawn child: malformed %s='%s' / %s\n", detail::kSpawnEntryVar,
                 entry_text.c_str(), detail::kSpawnFdVar);
    std::_Exit(3);
  }
  ::unsetenv(kSpawnChildVar);
  ::unsetenv(detail::kSpawnEntryVar);
  ::unsetenv(detail::kSpawnFdVar);
  const char* anchor = reinterpret_cast<const char*>(&detail::spawn_anchor);
  auto entry = reinterpret_cast<detail::SpawnEntry>(const_cast<char*>(anchor + entry_off));
  void* fn = const_cast<char*>(anchor + fn_off);

  int code = 0;
  try {
    Deadline deadline(kArgsTimeout);
    char header[kSpawnLengthBytes];
    CREW_CHECK_T(SpawnError, read_exact(fd, header, sizeof(header), deadline),
                 "spawn child: no arguments from the parent");
    const uint64_t n = decode_args_length(std::string_view(header, sizeof(header)));
    std::string args(n, '\0');
    CREW_CHECK_T(SpawnError, read_exact(fd, args.data(), n, deadline), "spawn child: arguments truncated");
    std::string result;
    entry(fn, args, &result);
    std::cout.flush();
    send_report(fd, SpawnReport::Kind::RESULT, std::move(result));
  } catch (const std::exception& e) {
    std::cout.flush();
    send_report(fd, SpawnReport::Kind::ERROR, e.what());
    code = 1;
  } catch (...) {
    std::cout.flush();
    send_report(fd, SpawnReport::Kind::ERROR, "unknown exception (not derived from std::exception)");
    code = 1;
  }
  std::cerr.flush();
  std::fflush(nullptr);
  ::close(fd);
  // _exit: the parent's static objects of later translation units were never constructed.
  ::_exit(code);
}

struct ChildHook {
  ChildHook() {
    if (!::getenv(kSpawnChildVar)) return;
    // fn runs inside this initialiser, maybe before crew_core's own: line-buffer stdout now.
    setup_worker_stdio();
    run_child();
  }
};
ChildHook g_child_hook;

}  // namespace

namespace detail {
void spawn_write_exact(int fd, const void* data, size_t size) { write_exact_impl(fd, data, size); }
}  // namespace detail

bool is_spawned_child() { return g_is_child; }

}  // namespace crew::dist
