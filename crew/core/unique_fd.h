#pragma once
// An owned POSIX file descriptor, closed on destruction (sockets, files, pipes).
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

}  // namespace crew
