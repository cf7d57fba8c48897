#pragma once
// An owned POSIX file descriptor, closed on destruction (sockets, files, pipes).
#include <cstdint>
#include <string>

namespace crew {

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() { reset(); }
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) reset(other.release());
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  // Closes the current descriptor (ignoring close errors) and owns `fd` instead.
  void reset(int fd = -1);
  // Closes now; IOError "op: close 'path': strerror" if close fails.
  void close_or_throw(const char* op, const std::string& path);

 private:
  int fd_ = -1;
};

// Opens path read-only and returns it only when it is a regular file: the open never blocks
// (O_NONBLOCK, cleared again once the file is known to be regular), so a FIFO, a device, a
// socket or a directory is a ValueError "<op>: '<path>' is a FIFO, not a regular file" at
// once instead of a read that waits forever for a writer. A missing or unreadable file is an
// IOError with strerror. *size_bytes (when given) receives the file's size.
UniqueFd open_regular_file(const std::string& path, const std::string& op, uint64_t* size_bytes = nullptr);

}  // namespace crew
