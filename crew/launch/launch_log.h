#pragma once
// The launcher's own log lines, in Paddle's format: "LAUNCH INFO 2026-12-02 20:00:00,123 msg".
// They go to stderr with one write() each; the threshold is --log_level.
#include <string>
#include <vector>

#include "crew/core/logging.h"

namespace crew::launch {

void set_launch_log_level(LogLevel level);
// Writes one line (or several, each prefixed) at `level` if it passes the threshold.
void launch_log(LogLevel level, const std::string& message);

inline void launch_info(const std::string& m) { launch_log(LogLevel::INFO, m); }
inline void launch_warning(const std::string& m) { launch_log(LogLevel::WARNING, m); }
inline void launch_error(const std::string& m) { launch_log(LogLevel::ERROR, m); }

// Writes all of `text` to fd, retrying on EINTR and short writes (errors are ignored: the
// console going away must not take the job down).
void write_all(int fd, const char* data, size_t size);

// "NAME=value" with the value of a secret (CREW_JOB_TOKEN, CREW_LAUNCH_TOKEN) replaced by
// "<set, N chars>"; anything else unchanged.
std::string mask_secret(const std::string& entry);

// Writes a worker's environment to `path` (envlog.N): sorted, secrets masked, mode 0600.
void write_envlog(const std::string& path, std::vector<std::string> env);

}  // namespace crew::launch
