#include "crew/distributed/store/tcp_store_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <list>
#include <map>
#include <unordered_map>
#include <vector>

#include "crew/core/check.h"
#include "crew/core/logging.h"
#include "crew/distributed/store/tcp_store_protocol.h"

namespace crew::dist {

using detail::BodyReader;
using detail::BodyWriter;
using detail::StoreOp;
using detail::StoreStatus;
using Clock = std::chrono::steady_clock;

namespace {

struct Client {
  net::Fd fd;
  std::vector<uint8_t> in;
  std::vector<uint8_t> out;
  bool authenticated = false;
  bool closing = false;  // drop once `out` is flushed
  Clock::time_point accepted = Clock::now();
  std::string peer;  // "address:port", for the log
};

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

// A parked GET or WAIT.
struct Waiter {
  int fd;
  StoreOp op;
  std::vector<std::string> keys;
  Clock::time_point deadline;
};

}  // namespace

struct TCPStoreServer::State {
  std::map<std::string, std::vector<uint8_t>> data;
  std::unordered_map<int, Client> clients;
  std::list<Waiter> waiters;
};

TCPStoreServer::TCPStoreServer(TCPStoreServerOptions options)
    : options_(std::move(options)), state_(std::make_unique<State>()) {
  const std::string bind_host = options_.host == "0.0.0.0" ? "" : options_.host;
  listen_fd_ = net::listen_on(bind_host, options_.port, 1024, &port_);
  net::set_nonblocking(listen_fd_.get(), true);
  int fds[2];
  CREW_CHECK_T(StoreError, ::pipe2(fds, O_CLOEXEC | O_NONBLOCK) == 0, errno_message("TCPStoreServer: pipe"));
  wake_read_.reset(fds[0]);
  wake_write_.reset(fds[1]);
  CREW_LOG(DEBUG) << "The server starts to listen on " << (bind_host.empty() ? "IP_ANY" : bind_host) << ":"
                  << port_;
  thread_ = std::thread([this] { run(); });
}

TCPStoreServer::~TCPStoreServer() {
  char b = 1;
  if (::write(wake_write_.get(), &b, 1) < 0) {
  }
  if (thread_.joinable()) thread_.join();
}

namespace {

void queue_reply(Client& c, StoreStatus status, const BodyWriter& body) {
  auto frame = body.frame(static_cast<uint8_t>(status));
  c.out.insert(c.out.end(), frame.begin(), frame.end());
}

// The whole value must be a decimal int64 (std::stoll would accept "12abc").
bool parse_int64(const std::vector<uint8_t>& bytes, int64_t* out) {
  const char* begin = reinterpret_cast<const char*>(bytes.data());
  const char* end = begin + bytes.size();
  auto [ptr, ec] = std::from_chars(begin, end, *out);
  return ec == std::errc() && ptr == end && begin != end;
}

// A waiter's deadline; huge timeouts ("wait forever") saturate instead of overflowing.
Clock::time_point deadline_after(int64_t timeout_ms) {
  constexpr int64_t kMaxMs = int64_t{100} * 365 * 24 * 3600 * 1000;  // 100 years
  return Clock::now() + std::chrono::milliseconds(std::clamp<int64_t>(timeout_ms, 0, kMaxMs));
}

// Compares every byte whatever the first difference, so timing does not leak the token.
bool tokens_equal(const std::string& given, const std::string& expected) {
  unsigned char diff = given.size() == expected.size() ? 0 : 1;
  for (size_t i = 0; i < given.size(); ++i)
    diff |= static_cast<unsigned char>(given[i] ^ expected[i % expected.size()]);
  return diff == 0;
}

bool all_present(const std::map<std::string, std::vector<uint8_t>>& data,
                 const std::vector<std::string>& keys) {
  for (auto& k : keys)
    if (!data.count(k)) return false;
  return true;
}

}  // namespace

void TCPStoreServer::run() {
  State& st = *state_;
  auto drop = [&](int fd, const std::string& why) {
    auto it = st.clients.find(fd);
    CREW_LOG(WARNING) << "TCPStore server (port " << port_ << "): dropping client "
                      << (it != st.clients.end() ? it->second.peer : "?") << " (fd " << fd << "): " << why;
    ++dropped_;
    st.waiters.remove_if([fd](const Waiter& w) { return w.fd == fd; });
    st.clients.erase(fd);
  };
  auto answer_waiter = [&](const Waiter& w, bool timed_out) {
    auto it = st.clients.find(w.fd);
    if (it == st.clients.end()) return;
    BodyWriter body;
    if (!timed_out) {
      if (w.op == StoreOp::GET) body.bytes(st.data[w.keys[0]]);
      queue_reply(it->second, StoreStatus::OK, body);
      return;
    }
    std::vector<std::string> missing;
    for (auto& k : w.keys)
      if (!st.data.count(k)) missing.push_back(k);
    body.u32(static_cast<uint32_t>(missing.size()));
    for (auto& k : missing) body.bytes(k);
    queue_reply(it->second, StoreStatus::TIMEOUT, body);
  };
  auto wake_waiters = [&] {
    for (auto it = st.waiters.begin(); it != st.waiters.end();) {
      if (all_present(st.data, it->keys)) {
        answer_waiter(*it, false);
        it = st.waiters.erase(it);
      } else {
        ++it;
      }
    }
  };
  auto handle = [&](int fd, Client& c, uint8_t code, const uint8_t* body, size_t len) {
    BodyReader r(body, len);
    const size_t kmax = options_.max_key_bytes;
    const StoreOp op = static_cast<StoreOp>(code);
    if (!c.authenticated) {
      CREW_CHECK(op == StoreOp::HELLO, "first message is ", int(code), ", expected HELLO");
      uint32_t version = r.u32();
      std::string token = r.str(1024);
      BodyWriter reply;
      if (version != detail::kStoreVersion) {
        reply.bytes("protocol version mismatch: server speaks " + std::to_string(detail::kStoreVersion));
        queue_reply(c, StoreStatus::ERROR, reply);
        c.closing = true;
        ++dropped_;
        return;
      }
      if (!options_.job_token.empty() && !tokens_equal(token, options_.job_token)) {
        const char* what = token.empty() ? "no job token" : "a wrong job token";
        CREW_LOG(WARNING) << "TCPStore server (port " << port_ << "): refused client " << c.peer << " with "
                          << what;
        reply.bytes(std::string("refused: the client presented ") + what +
                    "; this store requires the job's token (--token / CREW_JOB_TOKEN)");
        queue_reply(c, StoreStatus::ERROR, reply);
        c.closing = true;
        ++dropped_;
        return;
      }
      c.authenticated = true;
      queue_reply(c, StoreStatus::OK, reply);
      return;
    }
    BodyWriter reply;
    switch (op) {
      case StoreOp::SET: {
        std::string key = r.str(kmax);
        // An oversized value in a well-formed frame: refuse the op and keep the client (the
        // stream is still in step), so a misconfigured client gets a reason, not a hang-up.
        if (r.remaining() >= 4 && r.remaining() - 4 > options_.max_value_bytes) {
          const std::string why = "value of " + std::to_string(r.remaining() - 4) +
                                  " bytes is over this store's limit of " +
                                  std::to_string(options_.max_value_bytes) + " bytes";
          CREW_LOG(WARNING) << "TCPStore server (port " << port_ << "): refused set '" << key << "': " << why;
          reply.bytes("refused: " + why);
          queue_reply(c, StoreStatus::ERROR, reply);
          return;
        }
        st.data[key] = r.bytes(options_.max_value_bytes);
        queue_reply(c, StoreStatus::OK, reply);
        wake_waiters();
        break;
      }
      case StoreOp::GET: {
        int64_t timeout_ms = r.i64();
        std::string key = r.str(kmax);
        auto it = st.data.find(key);
        if (it != st.data.end()) {
          reply.bytes(it->second);
          queue_reply(c, StoreStatus::OK, reply);
        } else {
          st.waiters.push_back({fd, op, {key}, deadline_after(timeout_ms)});
        }
        break;
      }
      case StoreOp::ADD: {
        std::string key = r.str(kmax);
        int64_t delta = r.i64();
        int64_t value = 0;
        auto it = st.data.find(key);
        if (it != st.data.end() && !parse_int64(it->second, &value)) {
          // A caller's mistake, not a protocol fault: refuse the op, keep the client.
          reply.bytes("add on key '" + key + "': its value is not a decimal integer (" +
                      std::to_string(it->second.size()) + " bytes)");
          queue_reply(c, StoreStatus::ERROR, reply);
          break;
        }
        if (__builtin_add_overflow(value, delta, &value)) {
          reply.bytes("add on key '" + key + "': " + std::to_string(delta) + " overflows int64");
          queue_reply(c, StoreStatus::ERROR, reply);
          break;
        }
        std::string s = std::to_string(value);
        st.data[key] = std::vector<uint8_t>(s.begin(), s.end());
        reply.i64(value);
        queue_reply(c, StoreStatus::OK, reply);
        wake_waiters();
        break;
      }
      case StoreOp::COMPARE_SET: {
        std::string key = r.str(kmax);
        auto expected = r.bytes(options_.max_value_bytes);
        auto desired = r.bytes(options_.max_value_bytes);
        auto it = st.data.find(key);
        if ((it == st.data.end() && expected.empty()) || (it != st.data.end() && it->second == expected)) {
          st.data[key] = desired;
          reply.bytes(desired);
          wake_waiters();
        } else {
          reply.bytes(it == st.data.end() ? std::vector<uint8_t>{} : it->second);
        }
        queue_reply(c, StoreStatus::OK, reply);
        break;
      }
      case StoreOp::CHECK: {
        uint32_t n = r.u32();
        CREW_CHECK(n <= 65536, "check of ", n, " keys");
        bool ok = true;
        for (uint32_t i = 0; i < n; ++i) ok = st.data.count(r.str(kmax)) && ok;
        reply.u8(ok ? 1 : 0);
        queue_reply(c, StoreStatus::OK, reply);
        break;
      }
      case StoreOp::DELETE_KEY: {
        std::string key = r.str(kmax);
        reply.u8(st.data.erase(key) ? 1 : 0);
        queue_reply(c, StoreStatus::OK, reply);
        break;
      }
      case StoreOp::NUM_KEYS:
        reply.i64(static_cast<int64_t>(st.data.size()));
        queue_reply(c, StoreStatus::OK, reply);
        break;
      case StoreOp::WAIT: {
        int64_t timeout_ms = r.i64();
        uint32_t n = r.u32();
        CREW_CHECK(n <= 65536, "wait on ", n, " keys");
        std::vector<std::string> keys;
        for (uint32_t i = 0; i < n; ++i) keys.push_back(r.str(kmax));
        if (all_present(st.data, keys)) {
          queue_reply(c, StoreStatus::OK, reply);
        } else {
          st.waiters.push_back({fd, op, std::move(keys), deadline_after(timeout_ms)});
        }
        break;
      }
      default:
        CREW_THROW(ValueError, "unknown op ", int(code));
    }
    CREW_CHECK(r.done(), "message has ", len - r.offset(), " trailing bytes");
    num_keys_ = st.data.size();
  };

  std::vector<pollfd> fds;
  std::vector<uint8_t> buf(1 << 16);
  for (;;) {
    fds.clear();
    fds.push_back({listen_fd_.get(), POLLIN, 0});
    fds.push_back({wake_read_.get(), POLLIN, 0});
    for (auto& [fd, c] : st.clients)
      fds.push_back({fd, static_cast<short>(POLLIN | (c.out.empty() ? 0 : POLLOUT)), 0});
    // Sleep until the next waiter or handshake deadline (at most a minute).
    Clock::time_point next = Clock::time_point::max();
    for (auto& w : st.waiters) next = std::min(next, w.deadline);
    for (auto& [fd, c] : st.clients)
      if (!c.authenticated) next = std::min(next, c.accepted + options_.hello_timeout);
    int timeout_ms = -1;
    if (next != Clock::time_point::max()) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(next - Clock::now()).count();
      timeout_ms = static_cast<int>(std::clamp<long long>(left + 1, 0, 60000));
    }
    int n = ::poll(fds.data(), fds.size(), timeout_ms);
    if (n < 0 && errno != EINTR) {
      CREW_LOG(ERROR) << errno_message("TCPStore server: poll");
      return;
    }
    if (fds[1].revents) return;  // shutdown
    // Expired waits.
    const auto now = Clock::now();
    for (auto it = st.waiters.begin(); it != st.waiters.end();) {
      if (it->deadline <= now) {
        answer_waiter(*it, true);
        it = st.waiters.erase(it);
      } else {
        ++it;
      }
    }
    // Connections that never said HELLO.
    std::vector<int> silent;
    for (auto& [fd, c] : st.clients)
      if (!c.authenticated && !c.closing && now >= c.accepted + options_.hello_timeout) silent.push_back(fd);
    for (int fd : silent)
      drop(fd, "no handshake within " + std::to_string(options_.hello_timeout.count()) + " ms");
    if (fds[0].revents & POLLIN) {
      for (;;) {
        sockaddr_storage peer{};
        socklen_t peer_len = sizeof(peer);
        int cfd = ::accept4(listen_fd_.get(), reinterpret_cast<sockaddr*>(&peer), &peer_len,
                            SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (cfd < 0) break;
        if (st.clients.size() >= options_.max_clients) {
          CREW_LOG(WARNING) << "TCPStore server (port " << port_ << "): refused a connection: already "
                            << st.clients.size() << " clients (max_clients)";
          ::close(cfd);
          ++dropped_;
          continue;
        }
        net::set_nodelay(cfd);
        st.clients[cfd].fd.reset(cfd);
        st.clients[cfd].peer = peer_name(peer);
      }
    }
    for (size_t i = 2; i < fds.size(); ++i) {
      const int fd = fds[i].fd;
      auto it = st.clients.find(fd);
      if (it == st.clients.end()) continue;
      Client& c = it->second;
      if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) {
        ssize_t r = ::recv(fd, buf.data(), buf.size(), 0);
        if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) {
          st.waiters.remove_if([fd](const Waiter& w) { return w.fd == fd; });
          st.clients.erase(it);
          continue;
        }
        if (r > 0) c.in.insert(c.in.end(), buf.begin(), buf.begin() + r);
        // Process every complete frame.
        size_t pos = 0;
        bool dropped = false;
        while (!c.closing && c.in.size() - pos >= detail::kFrameHeaderBytes) {
          try {
            auto h = detail::decode_header(c.in.data() + pos);
            const size_t limit = options_.max_value_bytes * 2 + options_.max_key_bytes + 64;
            CREW_CHECK(h.body_len <= limit, "message body of ", h.body_len, " bytes is over the limit of ",
                       limit);
            if (c.in.size() - pos - detail::kFrameHeaderBytes < h.body_len) break;
            handle(fd, c, h.code, c.in.data() + pos + detail::kFrameHeaderBytes, h.body_len);
            pos += detail::kFrameHeaderBytes + h.body_len;
          } catch (const Error& e) {
            drop(fd, e.what());
            dropped = true;
            break;
          }
        }
        if (dropped) continue;
        c.in.erase(c.in.begin(), c.in.begin() + pos);
      }
      auto again = st.clients.find(fd);
      if (again == st.clients.end()) continue;
      Client& cc = again->second;
      if (!cc.out.empty()) {
        ssize_t w = ::send(fd, cc.out.data(), cc.out.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w > 0) cc.out.erase(cc.out.begin(), cc.out.begin() + w);
        if (w < 0 && errno != EAGAIN && errno != EINTR) {
          st.waiters.remove_if([fd](const Waiter& wt) { return wt.fd == fd; });
          st.clients.erase(again);
          continue;
        }
      }
      if (cc.closing && cc.out.empty()) {
        st.waiters.remove_if([fd](const Waiter& wt) { return wt.fd == fd; });
        st.clients.erase(again);
      }
    }
  }
}

}  // namespace crew::dist
