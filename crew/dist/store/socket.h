#pragma once
// RAII sockets and deadline-bounded I/O for the store (TCP, IPv4/IPv6).
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

namespace crew::dist::net {

// Owns a file descriptor; closes it on destruction.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() { reset(); }
  Fd(Fd&& other) noexcept : fd_(other.release()) {}
  Fd& operator=(Fd&& other) noexcept {
    if (this != &other) {
      reset();
      fd_ = other.release();
    }
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void reset(int fd = -1);

 private:
  int fd_ = -1;
};

// A listening socket bound to host:port (port 0 = a free port chosen by the OS).
// Throws StoreError naming the address and strerror on failure.
Fd listen_on(const std::string& host, int port, int backlog, int* bound_port);
// One connection attempt with a timeout; returns an invalid Fd (and sets *error) on failure.
Fd try_connect(const std::string& host, int port, std::chrono::milliseconds timeout, std::string* error);
// Sends all bytes before the deadline; false on timeout or error (with *error set).
bool send_all(int fd, const void* data, size_t size, std::chrono::steady_clock::time_point deadline,
              std::string* error);
// Receives exactly size bytes before the deadline; false on timeout, EOF or error.
bool recv_all(int fd, void* data, size_t size, std::chrono::steady_clock::time_point deadline,
              std::string* error);
void set_nonblocking(int fd, bool on);
void set_nodelay(int fd);

}  // namespace crew::dist::net
