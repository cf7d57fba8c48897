// TCPStoreServer and its daemon's loop: poll, accept, read frames, expire deadlines, flush
// replies and close clients. What each request does is tcp_store_handlers.cpp.
#include "crew/distributed/store/tcp_store_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>

#include "crew/core/check.h"
#include "crew/core/logging.h"
#include "crew/distributed/store/tcp_store_daemon.h"

namespace crew::dist {

namespace {

// max_clients, capped so that the process keeps kReservedFds descriptors for its own files.
size_t usable_max_clients(size_t wanted) {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return wanted;
  const size_t fds = static_cast<size_t>(limit.rlim_cur);
  const size_t room =
      fds > 2 * TCPStoreServerOptions::kReservedFds ? fds - TCPStoreServerOptions::kReservedFds : fds / 2;
  return std::min(wanted, std::max<size_t>(room, 1));
}

}  // namespace

TCPStoreServer::TCPStoreServer(TCPStoreServerOptions options) : options_(std::move(options)) {
  CREW_CHECK_T(StoreError, !options_.job_token.empty() || options_.insecure,
               "TCPStoreServer: refusing to serve a store without a job token: any local user (or host "
               "that reaches ",
               options_.host.empty() ? "0.0.0.0" : options_.host,
               ") could read, write and delete the job's keys; give a token (CREW_JOB_TOKEN, "
               "CREW_JOB_TOKEN_FILE, crew launch --token) or say --insecure / CREW_INSECURE_STORE=1");
  options_.max_clients = usable_max_clients(options_.max_clients);
  const std::string bind_host = options_.host == "0.0.0.0" ? "" : options_.host;
  listen_fd_ = net::listen_on(bind_host, options_.port, 1024, &port_);
  net::set_nonblocking(listen_fd_.get(), true);
  int fds[2];
  CREW_CHECK_T(StoreError, ::pipe2(fds, O_CLOEXEC | O_NONBLOCK) == 0, errno_message("TCPStoreServer: pipe"));
  wake_read_.reset(fds[0]);
  wake_write_.reset(fds[1]);
  daemon_ = std::make_unique<detail::StoreDaemon>(options_, port_, listen_fd_.get(), wake_read_.get());
  CREW_LOG(DEBUG) << "The server starts to listen on " << (bind_host.empty() ? "IP_ANY" : bind_host) << ":"
                  << port_ << (options_.job_token.empty() ? " without a job token (insecure)" : "");
  thread_ = std::thread([this] { daemon_->run(); });
}

TCPStoreServer::~TCPStoreServer() {
  char b = 1;
  if (::write(wake_write_.get(), &b, 1) < 0) {
  }
  if (thread_.joinable()) thread_.join();
}

size_t TCPStoreServer::dropped_clients() const { return daemon_->dropped_clients(); }
size_t TCPStoreServer::num_keys() const { return daemon_->num_keys(); }

namespace detail {
namespace {

std::string peer_name(const sockaddr_storage& a) {
  char host[INET6_ADDRSTRLEN] = "?";
  int port = 0;
  if (a.ss_family == AF_INET) {
    auto* in = reinterpret_cast<const sockaddr_in*>(&a);
    ::inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
    port = ntohs(in->sin_port);
  } else if (a.ss_family == AF_INET6) {
    auto* in6 = reinterpret_cast<const sockaddr_in6*>(&a);
    ::inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
    port = ntohs(in6->sin6_port);
  }
  return std::string(host) + ":" + std::to_string(port);
}

}  // namespace

StoreDaemon::StoreDaemon(const TCPStoreServerOptions& options, int port, int listen_fd, int wake_fd)
    : options_(options), port_(port), listen_fd_(listen_fd), wake_fd_(wake_fd) {}

void StoreDaemon::run() {
  std::vector<pollfd> fds;
  std::vector<uint8_t> buf(1 << 16);
  for (;;) {
    fill_poll_set(&fds);
    const int n = ::poll(fds.data(), fds.size(), poll_timeout_ms());
    if (n < 0 && errno != EINTR) {
      CREW_LOG(ERROR) << errno_message("TCPStore server: poll");
      return;
    }
    if (fds[1].revents) return;  // shutdown
    const auto now = Clock::now();
    expire_waiters(now);
    expire_handshakes(now);
    if (fds[0].revents & POLLIN) accept_clients();
    // Clients accepted just now are not in `fds`; the next round polls them.
    for (size_t i = 2; i < fds.size(); ++i) serve(fds[i].fd, fds[i].revents, buf);
  }
}

// The listening socket (unless accepting is paused), the wake pipe, then every client:
// POLLIN unless its replies are backlogged, POLLOUT while it has replies queued.
void StoreDaemon::fill_poll_set(std::vector<pollfd>* fds) const {
  fds->clear();
  fds->push_back({listen_fd_, static_cast<short>(accept_paused(Clock::now()) ? 0 : POLLIN), 0});
  fds->push_back({wake_fd_, POLLIN, 0});
  for (auto& [fd, c] : clients_) {
    const bool read = !c.backlogged(options_.max_queued_reply_bytes);
    fds->push_back({fd, static_cast<short>((read ? POLLIN : 0) | (c.out.empty() ? 0 : POLLOUT)), 0});
  }
}

// Sleep until the next waiter, handshake or accept-pause deadline (at most a minute); -1 if none.
int StoreDaemon::poll_timeout_ms() const {
  Clock::time_point next = Clock::time_point::max();
  for (auto& w : waiters_) next = std::min(next, w.deadline);
  for (auto& [fd, c] : clients_)
    if (!c.authenticated) next = std::min(next, c.accepted + options_.hello_timeout);
  if (accept_paused(Clock::now())) next = std::min(next, accept_paused_until_);
  if (next == Clock::time_point::max()) return -1;
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(next - Clock::now()).count();
  return static_cast<int>(std::clamp<long long>(left + 1, 0, 60000));
}

void StoreDaemon::accept_clients() {
  for (;;) {
    sockaddr_storage peer{};
    socklen_t peer_len = sizeof(peer);
    net::Fd fd(
        ::accept4(listen_fd_, reinterpret_cast<sockaddr*>(&peer), &peer_len, SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (!fd.valid()) {
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) pause_accepting(errno);
      return;
    }
    fd_shortage_logged_ = false;
    if (clients_.size() >= options_.max_clients) {
      if (!full_logged_) {
        CREW_LOG(WARNING) << "TCPStore server (port " << port_ << "): refusing connections: already "
                          << clients_.size() << " clients (max_clients, capped by the fd limit)";
        full_logged_ = true;
      }
      ++dropped_;
      continue;  // closes fd
    }
    full_logged_ = false;
    net::set_nodelay(fd.get());
    StoreClient& c = clients_[fd.get()];
    c.fd = std::move(fd);
    c.peer = peer_name(peer);
  }
}

// Out of descriptors: the pending connection stays in the backlog, so retrying at once would
// spin. Wait a little (a client that leaves frees one) and say so once.
void StoreDaemon::pause_accepting(int err) {
  accept_paused_until_ = Clock::now() + std::chrono::milliseconds(100);
  if (fd_shortage_logged_) return;
  fd_shortage_logged_ = true;
  CREW_LOG(WARNING) << errno_message(str_cat("TCPStore server (port ", port_, ", ", clients_.size(),
                                             " clients): cannot accept a connection; retrying every 100 ms"),
                                     err);
}

// A connection that never said HELLO would hold a slot for ever.
void StoreDaemon::expire_handshakes(Clock::time_point now) {
  std::vector<int> silent;
  for (auto& [fd, c] : clients_)
    if (!c.authenticated && !c.closing && now >= c.accepted + options_.hello_timeout) silent.push_back(fd);
  for (int fd : silent)
    drop(fd, "no handshake within " + std::to_string(options_.hello_timeout.count()) + " ms");
}

void StoreDaemon::serve(int fd, short revents, std::vector<uint8_t>& buf) {
  auto it = clients_.find(fd);
  if (it == clients_.end()) return;  // dropped earlier in this round
  StoreClient& c = it->second;
  const bool readable = revents & (POLLIN | POLLHUP | POLLERR);
  if (readable && !c.backlogged(options_.max_queued_reply_bytes) && !receive(fd, c, buf)) return;
  flush(fd, c);
  if (clients_.count(fd) == 0 || c.backlogged(options_.max_queued_reply_bytes) || c.in.empty()) return;
  // Requests held back while the replies were backlogged.
  try {
    handle_frames(fd, c);
  } catch (const Error& e) {
    drop(fd, e.what());
  }
}

// Reads what arrived and handles every complete frame; false once the client is gone.
bool StoreDaemon::receive(int fd, StoreClient& c, std::vector<uint8_t>& buf) {
  const ssize_t r = ::recv(fd, buf.data(), buf.size(), 0);
  if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) {
    forget(fd);  // a disconnect is not a protocol fault: neither logged nor counted
    return false;
  }
  if (r > 0) c.in.insert(c.in.end(), buf.begin(), buf.begin() + r);
  try {
    handle_frames(fd, c);
  } catch (const Error& e) {
    drop(fd, e.what());
    return false;
  }
  return true;
}

// Throws Error for a malformed frame; keeps an incomplete last frame for the next read. Before
// HELLO a frame may be at most kMaxHelloBytes: an unauthenticated peer cannot make the server
// buffer more than one read. Frames wait in `in` while the client's replies are backlogged.
void StoreDaemon::handle_frames(int fd, StoreClient& c) {
  const size_t limit = options_.max_value_bytes * 2 + options_.max_key_bytes + 64;
  size_t pos = 0;
  while (!c.closing && c.in.size() - pos >= kFrameHeaderBytes &&
         !c.backlogged(options_.max_queued_reply_bytes)) {
    const FrameHeader h = decode_header(c.in.data() + pos);
    if (!c.authenticated) {
      CREW_CHECK(h.body_len <= TCPStoreServerOptions::kMaxHelloBytes, "message body of ", h.body_len,
                 " bytes before the handshake (at most ", TCPStoreServerOptions::kMaxHelloBytes, ")");
    }
    CREW_CHECK(h.body_len <= limit, "message body of ", h.body_len, " bytes is over the limit of ", limit);
    if (c.in.size() - pos - kFrameHeaderBytes < h.body_len) break;
    handle(fd, c, h.code, c.in.data() + pos + kFrameHeaderBytes, h.body_len);
    pos += kFrameHeaderBytes + h.body_len;
  }
  c.in.erase(c.in.begin(), c.in.begin() + pos);
}

// Sends what the socket takes without blocking; the rest waits for POLLOUT.
void StoreDaemon::flush(int fd, StoreClient& c) {
  if (!c.out.empty()) {
    const ssize_t w = ::send(fd, c.out.data(), c.out.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w > 0) c.out.erase(c.out.begin(), c.out.begin() + w);
    if (w < 0 && errno != EAGAIN && errno != EINTR) return forget(fd);
  }
  if (c.closing && c.out.empty()) forget(fd);
}

// A protocol fault or a silent connection: logged and counted in dropped_clients().
void StoreDaemon::drop(int fd, const std::string& why) {
  auto it = clients_.find(fd);
  CREW_LOG(WARNING) << "TCPStore server (port " << port_ << "): dropping client "
                    << (it != clients_.end() ? it->second.peer : "?") << " (fd " << fd << "): " << why;
  ++dropped_;
  forget(fd);
}

// Closes the connection and unparks its waits.
void StoreDaemon::forget(int fd) {
  waiters_.remove_if([fd](const StoreWaiter& w) { return w.fd == fd; });
  clients_.erase(fd);
}

}  // namespace detail
}  // namespace crew::dist
