#pragma once
// StoreDaemon: the thread behind TCPStoreServer, in the shape of PyTorch's TCPStore daemon. A
// poll() loop accepts connections, reads frames, expires deadlines and closes clients
// (tcp_store_server.cpp); each request op has its own small handler (tcp_store_handlers.cpp).
// Internal to the server: everything here runs on the daemon's one thread.
#include <poll.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "crew/distributed/store/socket.h"
#include "crew/distributed/store/tcp_store_protocol.h"
#include "crew/distributed/store/tcp_store_server.h"

namespace crew::dist::detail {

using Clock = std::chrono::steady_clock;

// One connection: bytes received but not yet handled, replies not yet sent, handshake state.
struct StoreClient {
  net::Fd fd;
  std::vector<uint8_t> in;
  std::vector<uint8_t> out;
  bool authenticated = false;
  bool closing = false;  // drop once `out` is flushed
  // Not read from while its queued replies are over max_queued_reply_bytes.
  bool backlogged(size_t max_queued) const { return out.size() > max_queued; }
  Clock::time_point accepted = Clock::now();
  std::string peer;  // "address:port", for the log
};

// A parked GET or WAIT: answered when all its keys exist, or with TIMEOUT at the deadline.
struct StoreWaiter {
  int fd;
  StoreOp op;
  std::vector<std::string> keys;
  Clock::time_point deadline;
};

// One request being handled: its client and the reader over its body.
struct StoreRequest {
  int fd;
  StoreClient& client;
  BodyReader body;
  bool rest_ignored = false;  // refused before its body was read to the end: do not check the rest
};

class StoreDaemon {
 public:
  // listen_fd and wake_fd stay owned by the caller and must outlive run().
  StoreDaemon(const TCPStoreServerOptions& options, int port, int listen_fd, int wake_fd);
  // Serves every client until wake_fd becomes readable (or poll fails, logged).
  void run();

  size_t dropped_clients() const { return dropped_.load(); }
  size_t num_keys() const { return num_keys_.load(); }

 private:
  using Handler = void (StoreDaemon::*)(StoreRequest&);
  struct Route {
    StoreOp op;
    Handler handler;
  };
  static const Route kRoutes[];

  // The loop and the connections (tcp_store_server.cpp).
  void fill_poll_set(std::vector<pollfd>* fds) const;
  int poll_timeout_ms() const;
  void accept_clients();
  bool accept_paused(Clock::time_point now) const { return now < accept_paused_until_; }
  void pause_accepting(int err);
  void expire_handshakes(Clock::time_point now);
  void serve(int fd, short revents, std::vector<uint8_t>& buf);
  bool receive(int fd, StoreClient& c, std::vector<uint8_t>& buf);
  void handle_frames(int fd, StoreClient& c);
  void flush(int fd, StoreClient& c);
  void drop(int fd, const std::string& why);
  void forget(int fd);

  // The requests (tcp_store_handlers.cpp).
  void handle(int fd, StoreClient& c, uint8_t code, const uint8_t* body, size_t len);
  void hello(StoreRequest& req, uint8_t code);
  void refuse_hello(StoreClient& c, const std::string& why);
  void on_set(StoreRequest& req);
  void on_get(StoreRequest& req);
  void on_add(StoreRequest& req);
  void on_compare_set(StoreRequest& req);
  void on_check(StoreRequest& req);
  void on_delete_key(StoreRequest& req);
  void on_num_keys(StoreRequest& req);
  void on_wait(StoreRequest& req);
  bool all_present(const std::vector<std::string>& keys) const;
  void wake_waiters();
  void expire_waiters(Clock::time_point now);
  void answer_waiters(const std::function<bool(const StoreWaiter&)>& due, bool timed_out);
  void answer_waiter(const StoreWaiter& w, bool timed_out);

  const TCPStoreServerOptions options_;
  const int port_;
  const int listen_fd_;
  const int wake_fd_;
  std::map<std::string, std::vector<uint8_t>> data_;
  std::unordered_map<int, StoreClient> clients_;
  std::list<StoreWaiter> waiters_;
  // accept() failed for lack of descriptors (EMFILE): the listening socket is left out of
  // poll() until then instead of being retried at once (a spin), and it is logged once.
  Clock::time_point accept_paused_until_{};
  bool fd_shortage_logged_ = false;
  bool full_logged_ = false;  // max_clients reached: logged once until a slot frees
  std::atomic<size_t> dropped_{0};
  std::atomic<size_t> num_keys_{0};
};

}  // namespace crew::dist::detail
