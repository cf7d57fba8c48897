// TEMPORARY stand-in until crew/dist/store/tcp_store.h lands: in-memory store + a bound port.
#include "crew/launch/job_store.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <map>
#include <mutex>
#include <thread>

#include "crew/core/check.h"

namespace crew::launch {
namespace {
class MemStore : public dist::Store {
 public:
  void set(const std::string& k, const std::vector<uint8_t>& v) override { m_[k] = v; }
  std::vector<uint8_t> get(const std::string& k) override { return m_.at(k); }
  int64_t add(const std::string& k, int64_t d) override {
    auto& v = m_[k];
    int64_t x = v.empty() ? 0 : std::stoll(std::string(v.begin(), v.end()));
    x += d;
    auto s = std::to_string(x);
    v.assign(s.begin(), s.end());
    return x;
  }
  std::vector<uint8_t> compare_set(const std::string& k, const std::vector<uint8_t>& e,
                                   const std::vector<uint8_t>& d) override {
    auto it = m_.find(k);
    if ((it == m_.end() && e.empty()) || (it != m_.end() && it->second == e)) m_[k] = d;
    return m_[k];
  }
  bool check(const std::vector<std::string>& keys) override {
    for (auto& k : keys) if (!m_.count(k)) return false;
    return true;
  }
  bool delete_key(const std::string& k) override { return m_.erase(k) > 0; }
  int64_t num_keys() override { return static_cast<int64_t>(m_.size()); }
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds) override {
    CREW_CHECK_T(TimeoutError, check(keys), "missing");
  }
  std::map<std::string, std::vector<uint8_t>> m_;
};
}  // namespace

struct JobStore::Server {
  int fd = -1;
  ~Server() { if (fd >= 0) ::close(fd); }
};

std::unique_ptr<JobStore> JobStore::serve(const std::string& host, int port, std::chrono::milliseconds) {
  std::unique_ptr<JobStore> js(new JobStore());
  js->server_ = std::make_unique<Server>();
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<uint16_t>(port));
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
    ::close(fd);
    CREW_THROW(StoreError, errno_message("TCPStore: bind " + host + ":" + std::to_string(port)));
  }
  ::listen(fd, 64);
  socklen_t len = sizeof(a);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  js->port_ = ntohs(a.sin_port);
  js->server_->fd = fd;
  js->client_ = std::make_unique<MemStore>();
  return js;
}

std::unique_ptr<JobStore> JobStore::connect(const std::string&, int, std::chrono::milliseconds) {
  CREW_THROW(StoreError, "stand-in store cannot connect");
}

JobStore::~JobStore() = default;

}  // namespace crew::launch
