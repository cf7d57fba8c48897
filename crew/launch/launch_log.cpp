#include "crew/launch/launch_log.h"

#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <ctime>

namespace crew::launch {
namespace {

std::atomic<int> g_level{static_cast<int>(LogLevel::INFO)};

const char* level_name(LogLevel level) {
  switch (level) {
    case LogLevel::DEBUG: return "DEBUG";
    case LogLevel::INFO: return "INFO";
    case LogLevel::WARNING: return "WARNING";
    case LogLevel::ERROR: return "ERROR";
  }
  return "INFO";
}

}  // namespace

void set_launch_log_level(LogLevel level) { g_level = static_cast<int>(level); }

void write_all(int fd, const char* data, size_t size) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
}

void launch_log(LogLevel level, const std::string& message) {
  if (static_cast<int>(level) < g_level.load()) return;
  timeval tv{};
  ::gettimeofday(&tv, nullptr);
  tm local{};
  ::localtime_r(&tv.tv_sec, &local);
  char stamp[64];
  size_t len = std::strftime(stamp, sizeof(stamp), "%Y-%m-%d %H:%M:%S", &local);
  std::snprintf(stamp + len, sizeof(stamp) - len, ",%03d", static_cast<int>(tv.tv_usec / 1000));
  const std::string head = std::string("LAUNCH ") + level_name(level) + " " + stamp + " ";
  std::string out;
  size_t start = 0;
  while (start <= message.size()) {
    size_t end = message.find('\n', start);
    if (end == std::string::npos) end = message.size();
    out += head + message.substr(start, end - start) + "\n";
    start = end + 1;
  }
  write_all(2, out.data(), out.size());
}

}  // namespace crew::launch
