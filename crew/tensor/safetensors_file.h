#pragma once
// Internal helpers of crew/tensor/safetensors*.cpp: an owned file descriptor and
// loop-until-done read/write calls that turn OS failures into IOError naming the path.
#include <cstddef>
#include <cstdint>
#include <string>

namespace crew::detail {

// An owned POSIX file descriptor, closed on destruction.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd();
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  // Closes now; IOError "op 'path': strerror" if close fails.
  void close_or_throw(const char* op, const std::string& path);

 private:
  int fd_ = -1;
};

// Reads exactly n bytes at offset; returns the number of bytes read before end of file
// (less than n only when the file is shorter). IOError on a read failure.
size_t pread_full(int fd, void* buf, size_t n, uint64_t offset, const std::string& path);
// Writes all n bytes; IOError on failure.
void write_full(int fd, const void* buf, size_t n, const std::string& path);

}  // namespace crew::detail
