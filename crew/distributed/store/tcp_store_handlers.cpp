// The TCPStore server's request handlers: the handshake, one handler per op, and the parked
// waits they wake or expire. The loop that feeds them frames is tcp_store_server.cpp.
#include <algorithm>
#include <charconv>

#include "crew/core/check.h"
#include "crew/core/logging.h"
#include "crew/distributed/store/store.h"
#include "crew/distributed/store/tcp_store_daemon.h"

namespace crew::dist::detail {
namespace {

void queue_reply(StoreClient& c, StoreStatus status, const BodyWriter& body = BodyWriter()) {
  auto frame = body.frame(static_cast<uint8_t>(status));
  c.out.insert(c.out.end(), frame.begin(), frame.end());
}

void queue_error(StoreClient& c, const std::string& message) {
  BodyWriter body;
  body.bytes(message);
  queue_reply(c, StoreStatus::ERROR, body);
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
  return Clock::now() + std::chrono::milliseconds(std::clamp<int64_t>(timeout_ms, 0, kMaxWait.count()));
}

// Compares every byte whatever the first difference, so timing does not leak the token.
bool tokens_equal(const std::string& given, const std::string& expected) {
  unsigned char diff = given.size() == expected.size() ? 0 : 1;
  for (size_t i = 0; i < given.size(); ++i)
    diff |= static_cast<unsigned char>(given[i] ^ expected[i % expected.size()]);
  return diff == 0;
}

// CHECK's and WAIT's key list: a u32 count, then the keys. `what` starts the error message.
std::vector<std::string> read_keys(BodyReader& body, size_t max_key_bytes, const char* what) {
  const uint32_t n = body.u32();
  CREW_CHECK(n <= 65536, what, n, " keys");
  std::vector<std::string> keys;
  for (uint32_t i = 0; i < n; ++i) keys.push_back(body.str(max_key_bytes));
  return keys;
}

}  // namespace

// clang-format off
const StoreDaemon::Route StoreDaemon::kRoutes[] = {
    {StoreOp::SET,         &StoreDaemon::on_set},
    {StoreOp::GET,         &StoreDaemon::on_get},
    {StoreOp::ADD,         &StoreDaemon::on_add},
    {StoreOp::COMPARE_SET, &StoreDaemon::on_compare_set},
    {StoreOp::CHECK,       &StoreDaemon::on_check},
    {StoreOp::DELETE_KEY,  &StoreDaemon::on_delete_key},
    {StoreOp::NUM_KEYS,    &StoreDaemon::on_num_keys},
    {StoreOp::WAIT,        &StoreDaemon::on_wait},
};
// clang-format on

void StoreDaemon::handle(int fd, StoreClient& c, uint8_t code, const uint8_t* body, size_t len) {
  StoreRequest req{fd, c, BodyReader(body, len)};
  if (!c.authenticated) return hello(req, code);
  const Route* route = std::find_if(std::begin(kRoutes), std::end(kRoutes),
                                    [code](const Route& r) { return static_cast<uint8_t>(r.op) == code; });
  // HELLO has no route: a second one is as unknown as a code no op has.
  CREW_CHECK(route != std::end(kRoutes), "unknown op ", int(code));
  (this->*route->handler)(req);
  if (req.rest_ignored) return;
  CREW_CHECK(req.body.done(), "message has ", len - req.body.offset(), " trailing bytes");
  num_keys_ = data_.size();
}

void StoreDaemon::hello(StoreRequest& req, uint8_t code) {
  CREW_CHECK(static_cast<StoreOp>(code) == StoreOp::HELLO, "first message is ", int(code),
             ", expected HELLO");
  const uint32_t version = req.body.u32();
  const std::string token = req.body.str(1024);
  if (version != kStoreVersion) {
    return refuse_hello(req.client,
                        "protocol version mismatch: server speaks " + std::to_string(kStoreVersion));
  }
  if (!options_.job_token.empty() && !tokens_equal(token, options_.job_token)) {
    const char* what = token.empty() ? "no job token" : "a wrong job token";
    CREW_LOG(WARNING) << "TCPStore server (port " << port_ << "): refused client " << req.client.peer
                      << " with " << what;
    return refuse_hello(req.client, std::string("refused: the client presented ") + what +
                                        "; this store requires the job's token (--token / CREW_JOB_TOKEN)");
  }
  req.client.authenticated = true;
  queue_reply(req.client, StoreStatus::OK);
}

// The reason goes out first; the connection closes once it is sent.
void StoreDaemon::refuse_hello(StoreClient& c, const std::string& why) {
  queue_error(c, why);
  c.closing = true;
  ++dropped_;
}

void StoreDaemon::on_set(StoreRequest& req) {
  const std::string key = req.body.str(options_.max_key_bytes);
  // An oversized value in a well-formed frame: refuse the op and keep the client (the stream
  // is still in step), so a misconfigured client gets a reason, not a hang-up.
  const size_t remaining = req.body.remaining();
  if (remaining >= 4 && remaining - 4 > options_.max_value_bytes) {
    const std::string why = "value of " + std::to_string(remaining - 4) +
                            " bytes is over this store's limit of " +
                            std::to_string(options_.max_value_bytes) + " bytes";
    CREW_LOG(WARNING) << "TCPStore server (port " << port_ << "): refused set '" << key << "': " << why;
    queue_error(req.client, "refused: " + why);
    req.rest_ignored = true;
    return;
  }
  data_[key] = req.body.bytes(options_.max_value_bytes);
  queue_reply(req.client, StoreStatus::OK);
  wake_waiters();
}

void StoreDaemon::on_get(StoreRequest& req) {
  const int64_t timeout_ms = req.body.i64();
  std::string key = req.body.str(options_.max_key_bytes);
  auto it = data_.find(key);
  if (it == data_.end()) {
    waiters_.push_back({req.fd, StoreOp::GET, {std::move(key)}, deadline_after(timeout_ms)});
    return;
  }
  BodyWriter reply;
  reply.bytes(it->second);
  queue_reply(req.client, StoreStatus::OK, reply);
}

void StoreDaemon::on_add(StoreRequest& req) {
  const std::string key = req.body.str(options_.max_key_bytes);
  const int64_t delta = req.body.i64();
  int64_t value = 0;
  auto it = data_.find(key);
  // A caller's mistake, not a protocol fault: refuse the op, keep the client.
  if (it != data_.end() && !parse_int64(it->second, &value)) {
    return queue_error(req.client, "add on key '" + key + "': its value is not a decimal integer (" +
                                       std::to_string(it->second.size()) + " bytes)");
  }
  if (__builtin_add_overflow(value, delta, &value)) {
    return queue_error(req.client, "add on key '" + key + "': " + std::to_string(delta) + " overflows int64");
  }
  const std::string text = std::to_string(value);
  data_[key] = std::vector<uint8_t>(text.begin(), text.end());
  BodyWriter reply;
  reply.i64(value);
  queue_reply(req.client, StoreStatus::OK, reply);
  wake_waiters();
}

void StoreDaemon::on_compare_set(StoreRequest& req) {
  const std::string key = req.body.str(options_.max_key_bytes);
  const auto expected = req.body.bytes(options_.max_value_bytes);
  const auto desired = req.body.bytes(options_.max_value_bytes);
  auto it = data_.find(key);
  BodyWriter reply;
  if ((it == data_.end() && expected.empty()) || (it != data_.end() && it->second == expected)) {
    data_[key] = desired;
    reply.bytes(desired);
    wake_waiters();
  } else {
    reply.bytes(it == data_.end() ? std::vector<uint8_t>{} : it->second);
  }
  queue_reply(req.client, StoreStatus::OK, reply);
}

void StoreDaemon::on_check(StoreRequest& req) {
  const auto keys = read_keys(req.body, options_.max_key_bytes, "check of ");
  BodyWriter reply;
  reply.u8(all_present(keys) ? 1 : 0);
  queue_reply(req.client, StoreStatus::OK, reply);
}

void StoreDaemon::on_delete_key(StoreRequest& req) {
  const std::string key = req.body.str(options_.max_key_bytes);
  BodyWriter reply;
  reply.u8(data_.erase(key) ? 1 : 0);
  queue_reply(req.client, StoreStatus::OK, reply);
}

void StoreDaemon::on_num_keys(StoreRequest& req) {
  BodyWriter reply;
  reply.i64(static_cast<int64_t>(data_.size()));
  queue_reply(req.client, StoreStatus::OK, reply);
}

void StoreDaemon::on_wait(StoreRequest& req) {
  const int64_t timeout_ms = req.body.i64();
  auto keys = read_keys(req.body, options_.max_key_bytes, "wait on ");
  if (all_present(keys)) return queue_reply(req.client, StoreStatus::OK);
  waiters_.push_back({req.fd, StoreOp::WAIT, std::move(keys), deadline_after(timeout_ms)});
}

bool StoreDaemon::all_present(const std::vector<std::string>& keys) const {
  for (auto& k : keys)
    if (!data_.count(k)) return false;
  return true;
}

void StoreDaemon::wake_waiters() {
  answer_waiters([this](const StoreWaiter& w) { return all_present(w.keys); }, false);
}

void StoreDaemon::expire_waiters(Clock::time_point now) {
  answer_waiters([now](const StoreWaiter& w) { return w.deadline <= now; }, true);
}

// In the order they were parked, so a client's replies keep the order of its requests.
void StoreDaemon::answer_waiters(const std::function<bool(const StoreWaiter&)>& due, bool timed_out) {
  for (auto it = waiters_.begin(); it != waiters_.end();) {
    if (due(*it)) {
      answer_waiter(*it, timed_out);
      it = waiters_.erase(it);
    } else {
      ++it;
    }
  }
}

void StoreDaemon::answer_waiter(const StoreWaiter& w, bool timed_out) {
  auto it = clients_.find(w.fd);
  if (it == clients_.end()) return;
  BodyWriter body;
  if (!timed_out) {
    if (w.op == StoreOp::GET) body.bytes(data_[w.keys[0]]);
    return queue_reply(it->second, StoreStatus::OK, body);
  }
  std::vector<std::string> missing;
  for (auto& k : w.keys)
    if (!data_.count(k)) missing.push_back(k);
  body.u32(static_cast<uint32_t>(missing.size()));
  for (auto& k : missing) body.bytes(k);
  queue_reply(it->second, StoreStatus::TIMEOUT, body);
}

}  // namespace crew::dist::detail
