#include "crew/distributed/store/tcp_store.h"

#include <netdb.h>

#include <thread>

#include "crew/core/check.h"
#include "crew/core/logging.h"
#include "crew/core/timer.h"
#include "crew/distributed/store/tcp_store_protocol.h"

namespace crew::dist {

using detail::BodyReader;
using detail::BodyWriter;
using detail::StoreOp;
using detail::StoreStatus;

TCPStore::TCPStore(const std::string& host, TCPStoreOptions options)
    : Store(options.timeout), host_(host), port_(options.port), options_(std::move(options)) {
  if (options_.is_server) {
    TCPStoreServerOptions so;
    so.host = host_;
    so.port = port_;
    so.job_token = options_.job_token;
    so.insecure = options_.insecure;
    so.max_key_bytes = options_.max_key_bytes;
    so.max_value_bytes = options_.max_value_bytes;
    server_ = std::make_unique<TCPStoreServer>(so);
    port_ = server_->port();
  }
  CREW_CHECK(port_ > 0, "TCPStore: client needs a port (got ", port_, ")");
  CREW_CHECK(options_.num_workers >= 0, "TCPStore: num_workers must be >= 0 (got ", options_.num_workers,
             ")");
  connect();
  if (options_.num_workers > 0) check_in_workers();
}

void TCPStore::check_in_workers() {
  const int64_t arrived = add(kWorkersKey, 1);
  if (arrived == options_.num_workers) set(kWorkersReadyKey, std::string("1"));
  if (!options_.is_server || !options_.wait_for_workers) return;
  try {
    wait({kWorkersReadyKey}, timeout_);
  } catch (const TimeoutError&) {
    const int64_t now = add(kWorkersKey, 0);
    CREW_THROW(TimeoutError, "TCPStore at ", address(), ": ", now, " of ", options_.num_workers,
               " workers checked in within ", timeout_.count(),
               " ms (are the other ranks started, with the same CREW_MASTER and world size?)");
  }
}

TCPStore::~TCPStore() {
  fd_.reset();
  server_.reset();
}

void TCPStore::connect() {
  const std::string host = host_.empty() || host_ == "0.0.0.0" ? "127.0.0.1" : host_;
  Stopwatch clock;
  Deadline deadline(options_.connect_timeout);
  auto backoff = std::chrono::milliseconds(10);
  double last_log = -1e9;
  int attempts = 0;
  std::string error;
  // A name that does not resolve will not start resolving: fail now, naming it, rather than
  // retrying until connect_timeout. A temporary DNS failure (EAI_AGAIN) is retried below.
  if (int rc = net::resolve_host(host, port_, &error); rc != 0 && rc != EAI_AGAIN) {
    CREW_THROW(StoreError, "TCPStore: cannot resolve the store host '", host, "' of ", address(), ": ", error,
               ". Check the address (CREW_MASTER / --master, or MASTER_ADDR).");
  }
  for (;;) {
    ++attempts;
    auto per_try = std::min(deadline.remaining(), std::chrono::milliseconds(std::chrono::seconds(5)));
    net::Fd fd = net::try_connect(host, port_, std::max(per_try, std::chrono::milliseconds(1)), &error);
    if (fd.valid()) {
      fd_ = std::move(fd);
      break;
    }
    if (deadline.expired()) {
      CREW_THROW(StoreError, "TCPStore: cannot connect to ", address(), " after ", attempts, " attempts in ",
                 static_cast<int>(clock.seconds()), " s (last error: ", error,
                 "). Check that rank 0 or the launcher hosting the store is running, that ", address(),
                 " is the right address (CREW_MASTER / --master), and that no firewall blocks the port.");
    }
    if (clock.seconds() - last_log >= 5.0) {
      CREW_LOG(INFO) << "Retry to connect to " << address() << " while the server is not yet listening. ("
                     << error << "; " << static_cast<int>(clock.seconds()) << " s elapsed)";
      last_log = clock.seconds();
    }
    std::this_thread::sleep_for(std::min(backoff, deadline.remaining()));
    backoff = std::min(backoff * 2, std::chrono::milliseconds(1000));
  }
  if (attempts > 1) {
    CREW_LOG(INFO) << "Successfully connected to " << address();
  }
  // Handshake.
  BodyWriter hello;
  hello.u32(detail::kStoreVersion).bytes(options_.job_token);
  Reply r = request(static_cast<uint8_t>(StoreOp::HELLO), hello.data(), "hello");
  if (r.status != static_cast<uint8_t>(StoreStatus::OK)) {
    BodyReader br(r.body.data(), r.body.size());
    std::string msg = br.str(4096);
    fd_.reset();
    CREW_THROW(StoreError, "TCPStore: the store at ", address(), " ", msg);
  }
}

TCPStore::Reply TCPStore::request(uint8_t op, const std::vector<uint8_t>& body, const std::string& what,
                                  std::chrono::milliseconds wait_extra) {
  const std::string op_name = detail::store_op_name(static_cast<StoreOp>(op));
  CREW_CHECK_T(StoreError, fd_.valid(), "TCPStore ", op_name, " ", what, ": the connection to ", address(),
               " was lost earlier");
  // Saturate: a "forever" timeout (milliseconds::max()) must not overflow the time point.
  using detail::kMaxWait;
  const auto budget =
      timeout_ >= kMaxWait || wait_extra >= kMaxWait - timeout_ ? kMaxWait : timeout_ + wait_extra;
  const auto deadline = std::chrono::steady_clock::now() + budget;
  std::vector<uint8_t> frame(detail::kFrameHeaderBytes + body.size());
  detail::encode_header(op, static_cast<uint32_t>(body.size()), frame.data());
  std::copy(body.begin(), body.end(), frame.begin() + detail::kFrameHeaderBytes);
  std::string error;
  auto fail = [&](const std::string& err) {
    fd_.reset();  // the stream is out of sync now
    if (err.find("timed out") != std::string::npos) {
      CREW_THROW(TimeoutError, "TCPStore ", op_name, " ", what, " at ", address(), ": ", err, " after ",
                 budget.count(), " ms");
    }
    CREW_THROW(StoreError, "TCPStore ", op_name, " ", what, " at ", address(), ": ", err,
               " (did the process hosting the store exit?)");
  };
  if (!net::send_all(fd_.get(), frame.data(), frame.size(), deadline, &error)) fail(error);
  uint8_t header[detail::kFrameHeaderBytes];
  if (!net::recv_all(fd_.get(), header, sizeof(header), deadline, &error)) fail(error);
  detail::FrameHeader h;
  try {
    h = detail::decode_header(header);
  } catch (const Error& e) {
    fail(e.what());
  }
  if (h.body_len > options_.max_value_bytes + 1024) fail("reply of " + std::to_string(h.body_len) + " bytes");
  Reply reply{h.code, std::vector<uint8_t>(h.body_len)};
  if (h.body_len && !net::recv_all(fd_.get(), reply.body.data(), h.body_len, deadline, &error)) fail(error);
  return reply;
}

void TCPStore::check_key(const std::string& key) const {
  CREW_CHECK(!key.empty() && key.size() <= options_.max_key_bytes, "TCPStore: key of ", key.size(),
             " bytes (must be 1..", options_.max_key_bytes, ")");
}

void TCPStore::set(const std::string& key, const std::vector<uint8_t>& value) {
  check_key(key);
  CREW_CHECK(value.size() <= options_.max_value_bytes, "TCPStore set '", key, "': value of ", value.size(),
             " bytes is over the limit of ", options_.max_value_bytes);
  std::lock_guard<std::mutex> lock(mu_);
  BodyWriter b;
  b.bytes(key).bytes(value);
  Reply r = request(static_cast<uint8_t>(StoreOp::SET), b.data(), "'" + key + "'");
  if (r.status != static_cast<uint8_t>(StoreStatus::OK)) {
    BodyReader br(r.body.data(), r.body.size());
    CREW_THROW(ValueError, "TCPStore set '", key, "' at ", address(), ": ",
               br.str(options_.max_key_bytes + 1024));
  }
}

std::vector<uint8_t> TCPStore::get(const std::string& key) {
  check_key(key);
  std::lock_guard<std::mutex> lock(mu_);
  BodyWriter b;
  b.i64(timeout_.count()).bytes(key);
  Reply r = request(static_cast<uint8_t>(StoreOp::GET), b.data(), "'" + key + "'", std::chrono::seconds(5));
  CREW_CHECK_T(TimeoutError, r.status == static_cast<uint8_t>(StoreStatus::OK), "TCPStore get '", key,
               "' at ", address(), ": the key did not appear within ", timeout_.count(), " ms");
  BodyReader br(r.body.data(), r.body.size());
  return br.bytes(options_.max_value_bytes);
}

int64_t TCPStore::add(const std::string& key, int64_t delta) {
  check_key(key);
  std::lock_guard<std::mutex> lock(mu_);
  BodyWriter b;
  b.bytes(key).i64(delta);
  Reply r = request(static_cast<uint8_t>(StoreOp::ADD), b.data(), "'" + key + "'");
  BodyReader br(r.body.data(), r.body.size());
  if (r.status != static_cast<uint8_t>(StoreStatus::OK)) {
    CREW_THROW(ValueError, "TCPStore at ", address(), ": ", br.str(options_.max_key_bytes + 1024));
  }
  return br.i64();
}

std::vector<uint8_t> TCPStore::compare_set(const std::string& key, const std::vector<uint8_t>& expected,
                                           const std::vector<uint8_t>& desired) {
  check_key(key);
  std::lock_guard<std::mutex> lock(mu_);
  BodyWriter b;
  b.bytes(key).bytes(expected).bytes(desired);
  Reply r = request(static_cast<uint8_t>(StoreOp::COMPARE_SET), b.data(), "'" + key + "'");
  BodyReader br(r.body.data(), r.body.size());
  return br.bytes(options_.max_value_bytes);
}

bool TCPStore::check(const std::vector<std::string>& keys) {
  for (auto& k : keys) check_key(k);
  std::lock_guard<std::mutex> lock(mu_);
  BodyWriter b;
  b.u32(static_cast<uint32_t>(keys.size()));
  for (auto& k : keys) b.bytes(k);
  Reply r = request(static_cast<uint8_t>(StoreOp::CHECK), b.data(), std::to_string(keys.size()) + " keys");
  BodyReader br(r.body.data(), r.body.size());
  return br.u8() != 0;
}

bool TCPStore::delete_key(const std::string& key) {
  check_key(key);
  std::lock_guard<std::mutex> lock(mu_);
  BodyWriter b;
  b.bytes(key);
  Reply r = request(static_cast<uint8_t>(StoreOp::DELETE_KEY), b.data(), "'" + key + "'");
  BodyReader br(r.body.data(), r.body.size());
  return br.u8() != 0;
}

int64_t TCPStore::num_keys() {
  std::lock_guard<std::mutex> lock(mu_);
  Reply r = request(static_cast<uint8_t>(StoreOp::NUM_KEYS), {}, "");
  BodyReader br(r.body.data(), r.body.size());
  return br.i64();
}

void TCPStore::wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  for (auto& k : keys) check_key(k);
  std::lock_guard<std::mutex> lock(mu_);
  BodyWriter b;
  b.i64(timeout.count()).u32(static_cast<uint32_t>(keys.size()));
  for (auto& k : keys) b.bytes(k);
  auto extra =
      timeout > timeout_ ? timeout - timeout_ + std::chrono::seconds(5) : std::chrono::milliseconds(5000);
  Reply r =
      request(static_cast<uint8_t>(StoreOp::WAIT), b.data(), std::to_string(keys.size()) + " keys", extra);
  if (r.status == static_cast<uint8_t>(StoreStatus::OK)) return;
  BodyReader br(r.body.data(), r.body.size());
  uint32_t n = br.u32();
  std::string missing;
  for (uint32_t i = 0; i < n && i < 16; ++i)
    missing += (i ? ", '" : "'") + br.str(options_.max_key_bytes) + "'";
  CREW_THROW(TimeoutError, "TCPStore wait at ", address(), ": keys ", missing, " did not appear within ",
             timeout.count(), " ms");
}

}  // namespace crew::dist
