#pragma once
// glog-style logging to stderr: "I1202 19:30:00.123456 4242 tcp_store.cpp:57] message".
//
//   CREW_LOG(INFO) << "Successfully connected to " << host << ":" << port;
//   CREW_LOG(WARNING) << "Currently not a parallel execution environment ...";
//
// The threshold comes from CREW_LOG_LEVEL (DEBUG, INFO, WARNING, ERROR; default INFO)
// or set_log_level(). Each message is written with one write() so lines of concurrent
// processes and threads do not interleave.
#include <sstream>
#include <string>

namespace crew {

enum class LogLevel { DEBUG = 0, INFO = 1, WARNING = 2, ERROR = 3 };

void set_log_level(LogLevel level);
LogLevel log_level();
// Parses "DEBUG"/"INFO"/"WARNING"/"ERROR" (any case); throws ValueError otherwise.
LogLevel parse_log_level(const std::string& name);

namespace detail {

class LogMessage {
 public:
  LogMessage(LogLevel level, const char* file, int line);
  ~LogMessage();
  std::ostringstream& stream() { return stream_; }

 private:
  LogLevel level_;
  std::ostringstream stream_;
};

bool log_enabled(LogLevel level);

}  // namespace detail
}  // namespace crew

#define CREW_LOG(level)                                              \
  if (!::crew::detail::log_enabled(::crew::LogLevel::level)) {       \
  } else                                                             \
    ::crew::detail::LogMessage(::crew::LogLevel::level, __FILE__, __LINE__).stream()
