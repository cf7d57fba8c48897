#pragma once
// RAII sockets and deadline-bounded I/O for the store (TCP, IPv4/IPv6).
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

#include "crew/core/unique_fd.h"

namespace crew::dist::net {

using Fd = crew::UniqueFd;

// A listening socket bound to host:port (port 0 = a free port chosen by the OS).
// Throws StoreError naming the address and strerror on failure.
Fd listen_on(const std::string& host, int port, int backlog, int* bound_port);
// Resolves host:port once: 0, or getaddrinfo's error code with *error set. EAI_AGAIN (a
// temporary DNS failure) is worth retrying; any other code means the name will not resolve.
int resolve_host(const std::string& host, int port, std::string* error);
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
