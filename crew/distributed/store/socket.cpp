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

// What a failed bind() means for the user: another listener on the port, or an address that
// is not this host's (node 0 serves the store on --master's host).
std::string bind_hint(int err, const std::string& host, int port) {
  if (err == EADDRINUSE && port != 0) {
    return " (is another job or store using this port? choose another --master port)";
  }
  if (err == EADDRNOTAVAIL) {
    return " (" + host +
           " is not an address of this host; node 0 serves the store on --master's host, "
           "so run node 0 where that address is, or name one of this host's addresses)";
  }
  return "";
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
  int bind_errno = 0;
  for (addrinfo* a = ai.list; a != nullptr; a = a->ai_next) {
    Fd fd(::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol));
    if (!fd.valid()) {
      last_error = errno_message("socket");
      continue;
    }
    int one = 1;
    setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (::bind(fd.get(), a->ai_addr, a->ai_addrlen) != 0) {
      bind_errno = errno;
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
             bind_hint(bind_errno, host, port));
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

namespace {

// One direction of a deadline-bounded transfer: what to poll for and the words for failures.
struct Transfer {
  short events;
  const char* call;       // "send" / "recv", for errno_message
  const char* timed_out;  // *error on timeout
  const char* closed;     // *error when the call returns 0; null: 0 is no progress, try again
};

// Moves `size` bytes with step(offset, left) (a non-blocking send or recv) before the deadline,
// through EINTR, EAGAIN and partial transfers.
template <typename Step>
bool transfer_all(int fd, size_t size, std::chrono::steady_clock::time_point deadline, const Transfer& t,
                  std::string* error, Step step) {
  size_t done = 0;
  while (done < size) {
    pollfd pfd{fd, t.events, 0};
    int n = ::poll(&pfd, 1, ms_until(deadline));
    if (n == 0) {
      *error = t.timed_out;
      return false;
    }
    if (n < 0) {
      if (errno == EINTR) continue;
      *error = errno_message("poll");
      return false;
    }
    ssize_t moved = step(done, size - done);
    if (moved == 0 && t.closed) {
      *error = t.closed;
      return false;
    }
    if (moved < 0) {
      if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;
      *error = errno_message(t.call);
      return false;
    }
    done += static_cast<size_t>(moved);
  }
  return true;
}

}  // namespace

bool send_all(int fd, const void* data, size_t size, std::chrono::steady_clock::time_point deadline,
              std::string* error) {
  const char* p = static_cast<const char*>(data);
  return transfer_all(fd, size, deadline, {POLLOUT, "send", "timed out sending", nullptr}, error,
                      [fd, p](size_t offset, size_t left) {
                        return ::send(fd, p + offset, left, MSG_NOSIGNAL | MSG_DONTWAIT);
                      });
}

bool recv_all(int fd, void* data, size_t size, std::chrono::steady_clock::time_point deadline,
              std::string* error) {
  char* p = static_cast<char*>(data);
  const Transfer t{POLLIN, "recv", "timed out waiting for the reply",
                   "connection closed by the store server"};
  return transfer_all(fd, size, deadline, t, error, [fd, p](size_t offset, size_t left) {
    return ::recv(fd, p + offset, left, MSG_DONTWAIT);
  });
}

}  // namespace crew::dist::net
