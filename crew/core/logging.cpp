#include "crew/core/logging.h"

#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <ctime>

#include "crew/core/check.h"

namespace crew {
namespace {

LogLevel initial_level() {
  const char* env = std::getenv("CREW_LOG_LEVEL");
  if (env == nullptr || *env == '\0') return LogLevel::INFO;
  try {
    return parse_log_level(env);
  } catch (const Error&) {
    return LogLevel::INFO;
  }
}

std::atomic<int>& level_storage() {
  static std::atomic<int> level{static_cast<int>(initial_level())};
  return level;
}

const char* basename_of(const char* path) {
  const char* slash = path;
  for (const char* p = path; *p; ++p) {
    if (*p == '/') slash = p + 1;
  }
  return slash;
}

}  // namespace

void set_log_level(LogLevel level) { level_storage().store(static_cast<int>(level)); }
LogLevel log_level() { return static_cast<LogLevel>(level_storage().load()); }

LogLevel parse_log_level(const std::string& name) {
  std::string up = name;
  std::transform(up.begin(), up.end(), up.begin(), [](unsigned char c) { return std::toupper(c); });
  if (up == "DEBUG") return LogLevel::DEBUG;
  if (up == "INFO") return LogLevel::INFO;
  if (up == "WARNING" || up == "WARN") return LogLevel::WARNING;
  if (up == "ERROR") return LogLevel::ERROR;
  CREW_THROW(ValueError, "log level must be DEBUG, INFO, WARNING or ERROR, got '", name, "'");
}

namespace detail {

bool log_enabled(LogLevel level) { return static_cast<int>(level) >= level_storage().load(); }

LogMessage::LogMessage(LogLevel level, const char* file, int line) : level_(level) {
  static const char kTags[] = {'D', 'I', 'W', 'E'};
  timeval tv{};
  gettimeofday(&tv, nullptr);
  tm local{};
  localtime_r(&tv.tv_sec, &local);
  char head[96];
  std::snprintf(head, sizeof(head), "%c%02d%02d %02d:%02d:%02d.%06ld %d %s:%d] ",
                kTags[static_cast<int>(level)], local.tm_mon + 1, local.tm_mday, local.tm_hour,
                local.tm_min, local.tm_sec, static_cast<long>(tv.tv_usec), static_cast<int>(getpid()),
                basename_of(file), line);
  stream_ << head;
}

LogMessage::~LogMessage() {
  stream_ << '\n';
  const std::string text = stream_.str();
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(STDERR_FILENO, text.data() + done, text.size() - done);
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  (void)level_;
}

}  // namespace detail
}  // namespace crew
