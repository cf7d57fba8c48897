#pragma once
// TCPStoreServer: the rendezvous store's server. It binds and listens in its constructor (port
// 0 = a free port; port() tells which), so the address is reserved before any client exists:
// there is no find-a-free-port-then-bind race. One thread serves every client with poll();
// waits (GET of a missing key, WAIT) are parked and answered when the keys appear or their
// timeout passes, never by busy polling. A malformed, oversized or unauthenticated message
// drops that client only (logged); the others keep being served. The thread is a
// detail::StoreDaemon (tcp_store_daemon.h): a poll loop plus one handler per request op.
//
//   TCPStoreServer server({.host = "127.0.0.1", .port = 0});
//   TCPStore client("127.0.0.1", {.port = server.port()});
#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <thread>

#include "crew/distributed/store/socket.h"

namespace crew::dist {
namespace detail {
class StoreDaemon;
}

struct TCPStoreServerOptions {
  std::string host = "127.0.0.1";  // "" or "0.0.0.0" = every interface (multi-host jobs only)
  int port = 0;
  std::string job_token;  // non-empty: clients must present it in HELLO
  size_t max_key_bytes = 4096;
  size_t max_value_bytes = 64u << 20;
  size_t max_clients = 4096;
  // A connection that has not completed HELLO by then is dropped (it would hold a slot).
  std::chrono::milliseconds hello_timeout{std::chrono::seconds(30)};
};

class TCPStoreServer {
 public:
  explicit TCPStoreServer(TCPStoreServerOptions options = {});
  ~TCPStoreServer();
  TCPStoreServer(const TCPStoreServer&) = delete;
  TCPStoreServer& operator=(const TCPStoreServer&) = delete;

  int port() const { return port_; }
  const std::string& host() const { return options_.host; }
  // Clients refused or dropped for bad input since start (for tests and logs).
  size_t dropped_clients() const;
  size_t num_keys() const;

 private:
  TCPStoreServerOptions options_;
  int port_ = 0;
  net::Fd listen_fd_;
  net::Fd wake_read_;
  net::Fd wake_write_;
  std::unique_ptr<detail::StoreDaemon> daemon_;
  std::thread thread_;
};

}  // namespace crew::dist
