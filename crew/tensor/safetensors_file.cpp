#include "crew/tensor/safetensors_file.h"

#include <unistd.h>

#include <cerrno>

#include "crew/core/check.h"

namespace crew::detail {

size_t pread_full(int fd, void* buf, size_t n, uint64_t offset, const std::string& path) {
  auto* p = static_cast<char*>(buf);
  size_t done = 0;
  while (done < n) {
    ssize_t got = ::pread(fd, p + done, n - done, static_cast<off_t>(offset + done));
    if (got < 0) {
      if (errno == EINTR) continue;
      throw IOError(errno_message(str_cat("load: read '", path, "' at byte ", offset + done)));
    }
    if (got == 0) break;  // end of file
    done += static_cast<size_t>(got);
  }
  return done;
}

void write_full(int fd, const void* buf, size_t n, const std::string& path) {
  const auto* p = static_cast<const char*>(buf);
  size_t done = 0;
  while (done < n) {
    ssize_t put = ::write(fd, p + done, n - done);
    if (put < 0) {
      if (errno == EINTR) continue;
      throw IOError(errno_message(str_cat("save: write '", path, "'")));
    }
    done += static_cast<size_t>(put);
  }
}

}  // namespace crew::detail
