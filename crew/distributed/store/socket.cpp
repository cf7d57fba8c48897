#include "crew/distributed/store/socket.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "crew/core/check.h"

namespace crew::dist::net {
namespace {

int ms_until(std::chrono::steady_clock::time_point deadline) {
  auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
  if (left.count() <= 0) return 0;
  return left.count() > 1000000 ? 1000000 : static_cast<int>(left.count());
}

struct AddrInfo {
  addrinfo* list = nullptr;
  ~AddrInfo() {
    if (list) freeaddrinfo(list);
  }
};

int resolve(const std::string& host, int port, bool passive, AddrInfo* out) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  if (passive) hints.ai_flags = AI_PASSIVE;
  const std::string service = std::to_string(port);
  return getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &out->list);
}

}  // namespace

void set_nonblocking(int fd, bool on) {
  int flags = fcntl(fd, F_GETFL, 0);
  fcntl(fd, F_SETFL, on ? (flags | O_NONBLOCK) : (flags & ~O_NONBLOCK));
}

void set_nodelay(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

Fd listen_on(const std::string& host, int port, int backlog, int* bound_port) {
  AddrInfo ai;
  int rc = resolve(host, port, true, &ai);
  CREW_CHECK_T(StoreError, rc == 0, "TCPStore: cannot resolve listen address ", host, ":", port, ": ",
               gai_strerror(rc));
  std::string last_error = "no address";
  for (addrinfo* a = ai.list; a != nullptr; a = a->ai_next) {
    Fd fd(::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol));
    if (!fd.valid()) {
      last_error = errno_message("socket");
      continue;
    }
    int one = 1;
    setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (::bind(fd.get(), a->ai_addr, a->ai_addrlen) != 0) {
      last_error = errno_message("bind");
      continue;
    }
    if (::listen(fd.get(), backlog) != 0) {
      last_error = errno_message("listen");
      continue;
    }
    sockaddr_storage addr{};
    socklen_t len = sizeof(addr);
    getsockname(fd.get(), reinterpret_cast<sockaddr*>(&addr), &len);
    *bound_port = addr.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port)
                                             : ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
    return fd;
  }
  CREW_THROW(StoreError, "TCPStore: cannot listen on ", host, ":", port, ": ", last_error,
             port != 0 ? " (is another job or store using this port? choose another --master port)" : "");
}

int resolve_host(const std::string& host, int port, std::string* error) {
  AddrInfo ai;
  int rc = resolve(host, port, false, &ai);
  if (rc != 0) *error = gai_strerror(rc);
  return rc;
}

Fd try_connect(const std::string& host, int port, std::chrono::milliseconds timeout, std::string* error) {
  AddrInfo ai;
  int rc = resolve(host, port, false, &ai);
  if (rc != 0) {
    *error = std::string("cannot resolve host: ") + gai_strerror(rc);
    return Fd();
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (addrinfo* a = ai.list; a != nullptr; a = a->ai_next) {
    Fd fd(::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol));
    if (!fd.valid()) {
      *error = errno_message("socket");
      continue;
    }
    set_nonblocking(fd.get(), true);
    int r = ::connect(fd.get(), a->ai_addr, a->ai_addrlen);
    if (r != 0 && errno != EINPROGRESS) {
      *error = errno_message("connect");
      continue;
    }
    if (r != 0) {
      pollfd p{fd.get(), POLLOUT, 0};
      int n = ::poll(&p, 1, ms_until(deadline));
      if (n <= 0) {
        *error = n == 0 ? "connect timed out" : errno_message("poll");
        continue;
      }
      int err = 0;
      socklen_t len = sizeof(err);
      getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len);
      if (err != 0) {
        *error = errno_message("connect", err);
        continue;
      }
    }
    set_nonblocking(fd.get(), false);
    set_nodelay(fd.get());
    return fd;
  }
  return Fd();
}

bool send_all(int fd, const void* data, size_t size, std::chrono::steady_clock::time_point deadline,
              std::string* error) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    pollfd pfd{fd, POLLOUT, 0};
    int n = ::poll(&pfd, 1, ms_until(deadline));
    if (n == 0) {
      *error = "timed out sending";
      return false;
    }
    if (n < 0) {
      if (errno == EINTR) continue;
      *error = errno_message("poll");
      return false;
    }
    ssize_t w = ::send(fd, p, size, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w < 0) {
      if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;
      *error = errno_message("send");
      return false;
    }
    p += w;
    size -= static_cast<size_t>(w);
  }
  return true;
}

bool recv_all(int fd, void* data, size_t size, std::chrono::steady_clock::time_point deadline,
              std::string* error) {
  char* p = static_cast<char*>(data);
  while (size > 0) {
    pollfd pfd{fd, POLLIN, 0};
    int n = ::poll(&pfd, 1, ms_until(deadline));
    if (n == 0) {
      *error = "timed out waiting for the reply";
      return false;
    }
    if (n < 0) {
      if (errno == EINTR) continue;
      *error = errno_message("poll");
      return false;
    }
    ssize_t r = ::recv(fd, p, size, MSG_DONTWAIT);
    if (r == 0) {
      *error = "connection closed by the store server";
      return false;
    }
    if (r < 0) {
      if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;
      *error = errno_message("recv");
      return false;
    }
    p += r;
    size -= static_cast<size_t>(r);
  }
  return true;
}

}  // namespace crew::dist::net
