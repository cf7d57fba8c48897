#pragma once
// TCPStoreServer: the rendezvous store's server. It binds and listens in its constructor (port
// 0 = a free port; port() tells which), so the address is reserved before any client exists:
// there is no find-a-free-port-then-bind race. One thread serves every client with poll();
// waits (GET of a missing key, WAIT) are parked and answered when the keys appear or their
// timeout passes, never by busy polling. A malformed, oversized or unauthenticated message
// drops that client only (logged); the others keep being served. The thread is a
// detail::StoreDaemon (tcp_store_daemon.h): a poll loop plus one handler per request op.
//
//   TCPStoreServer server({.host = "127.0.0.1", .port = 0, .job_token = token});
//   TCPStore client("127.0.0.1", {.port = server.port(), .job_token = token});
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
  // Clients must present it in HELLO. A server without one refuses to start unless `insecure`
  // says so: then anyone who reaches the port can read, write and delete the job's keys.
  std::string job_token;
  bool insecure = false;  // serve without a token (--insecure, CREW_INSECURE_STORE=1)
  size_t max_key_bytes = 4096;
  size_t max_value_bytes = 64u << 20;
  // Held connections; at most RLIMIT_NOFILE less kReservedFds, so that the process keeps
  // descriptors for its own files (worker logs, sockets) however many clients connect.
  size_t max_clients = 4096;
  // A client with more reply bytes queued than this is not read from until it reads them: one
  // that sends requests but never reads replies cannot make the server queue without bound.
  size_t max_queued_reply_bytes = 4u << 20;
  // A connection that has not completed HELLO by then is dropped (it would hold a slot). Real
  // clients send HELLO as soon as they connect; until then a frame may be at most
  // kMaxHelloBytes, so an unauthenticated peer cannot make the server buffer more.
  std::chrono::milliseconds hello_timeout{std::chrono::seconds(5)};

  static constexpr size_t kMaxHelloBytes = 4096;
  static constexpr size_t kReservedFds = 64;
};

class TCPStoreServer {
 public:
  explicit TCPStoreServer(TCPStoreServerOptions options = {});
  ~TCPStoreServer();
  TCPStoreServer(const TCPStoreServer&) = delete;
  TCPStoreServer& operator=(const TCPStoreServer&) = delete;

  int port() const { return port_; }
  const std::string& host() const { return options_.host; }
  // max_clients as this server applies it: capped by RLIMIT_NOFILE less kReservedFds.
  size_t max_clients() const { return options_.max_clients; }
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
