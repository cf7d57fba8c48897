#include "crew/distributed/debug/process_liveness.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <sstream>

#include "crew/core/check.h"

namespace crew::dist::debug {

namespace {

std::string pid_namespace() {
  char buf[128] = {};
  const ssize_t n = ::readlink("/proc/self/ns/pid", buf, sizeof(buf) - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string("unknown");
}

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0) return "unknown";
  return name;
}

bool is_zombie(long pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  // "pid (comm) S ...": the state follows the last ')' (comm may hold spaces and parentheses).
  const size_t close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'Z';
}

}  // namespace

std::string process_identity() { return str_cat(host_name(), " ", pid_namespace(), " ", ::getpid()); }

bool process_gone(const std::string& identity) {
  std::istringstream in(identity);
  std::string host, ns;
  long pid = 0;
  if (!(in >> host >> ns >> pid) || pid <= 0) return false;
  if (host != host_name() || ns != pid_namespace() || ns == "unknown") return false;
  if (::kill(static_cast<pid_t>(pid), 0) != 0) return errno == ESRCH;
  return is_zombie(pid);
}

}  // namespace crew::dist::debug
