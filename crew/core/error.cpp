#include "crew/core/error.h"

#include <cerrno>
#include <cstring>

namespace crew {

std::string errno_message(const std::string& what) { return errno_message(what, errno); }

std::string errno_message(const std::string& what, int err) {
  return what + ": " + std::strerror(err) + " (errno " + std::to_string(err) + ")";
}

}  // namespace crew
