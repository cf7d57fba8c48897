#include "crew/core/unique_fd.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

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

namespace {

// What a stat mode is, in words, for "not a regular file" errors.
const char* file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a file";
}

}  // namespace

UniqueFd open_regular_file(const std::string& path, const std::string& op, uint64_t* size_bytes) {
  // O_NONBLOCK: opening a FIFO for reading otherwise waits for a writer, before any check.
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  if (!fd.valid()) throw IOError(errno_message(str_cat(op, ": cannot open '", path, "'")));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) throw IOError(errno_message(str_cat(op, ": stat '", path, "'")));
  CREW_CHECK(S_ISREG(st.st_mode), op, ": '", path, "' is ", file_kind(st.st_mode), ", not a regular file");
  const int flags = ::fcntl(fd.get(), F_GETFL);
  if (flags < 0 || ::fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK) != 0) {
    throw IOError(errno_message(str_cat(op, ": fcntl '", path, "'")));
  }
  if (size_bytes != nullptr) *size_bytes = static_cast<uint64_t>(st.st_size);
  return fd;
}

}  // namespace crew
