#include "crew/core/unique_fd.h"

#include <unistd.h>

#include "crew/core/check.h"

namespace crew {

void UniqueFd::reset(int fd) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

void UniqueFd::close_or_throw(const char* op, const std::string& path) {
  int fd = release();
  if (fd >= 0 && ::close(fd) != 0) {
    throw IOError(errno_message(str_cat(op, ": close '", path, "'")));
  }
}

}  // namespace crew
