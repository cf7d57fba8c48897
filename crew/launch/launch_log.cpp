#include "crew/launch/launch_log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <ctime>

#include "crew/core/check.h"

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

std::string mask_secret(const std::string& entry) {
  for (const char* name : {"CREW_JOB_TOKEN=", "CREW_LAUNCH_TOKEN="}) {
    const std::string prefix = name;
    if (entry.rfind(prefix, 0) == 0) {
      return prefix + "<set, " + std::to_string(entry.size() - prefix.size()) + " chars>";
    }
  }
  return entry;
}

void write_envlog(const std::string& path, std::vector<std::string> env) {
  std::sort(env.begin(), env.end());
  std::string text;
  for (const auto& e : env) text += mask_secret(e) + "\n";
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) CREW_THROW(IOError, errno_message("launch: cannot write '" + path + "'"));
  ::fchmod(fd, 0600);  // an envlog left by an older launcher may be world-readable
  write_all(fd, text.data(), text.size());
  ::close(fd);
}

}  // namespace crew::launch
