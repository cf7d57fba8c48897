#include "examples/trainer/metrics.h"

#include <charconv>

#include "crew/core/error.h"

namespace trainer {

std::string short_float(float v) {
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, res.ptr);
}

Metrics::Metrics(const std::string& path, const std::string& program) {
  if (path.empty()) return;
  out_.open(path, std::ios::app);
  if (!out_) throw crew::IOError(crew::errno_message(program + ": open metrics file " + path));
}

void Metrics::line(const std::string& json) {
  if (!out_.is_open()) return;
  out_ << json << '\n';
  out_.flush();
}

}  // namespace trainer
