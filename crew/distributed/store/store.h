#pragma once
// Store: the key-value rendezvous every rank of a job shares (PyTorch c10d's Store, in
// crew's words). Implementations: TCPStore (server + client), HashStore (in process),
// PrefixStore (a namespace over another store).
//
//   store.set("addr/1", "10.0.0.2:4000");
//   std::string peer = store.get_string("addr/0");     // waits up to timeout() for the key
//   int64_t arrived = store.add("barrier/0", 1);       // atomic counter
//   store.wait({"ready/0", "ready/1"}, std::chrono::seconds(30));  // TimeoutError names the missing keys
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace crew::dist {

namespace detail {
// The longest wait a deadline is computed for (100 years): "forever" (milliseconds::max())
// saturates to it, so now() + timeout cannot overflow.
inline constexpr std::chrono::milliseconds kMaxWait{int64_t{100} * 365 * 24 * 3600 * 1000};
}  // namespace detail

class Store {
 public:
  static constexpr std::chrono::milliseconds kDefaultTimeout{std::chrono::minutes(5)};

  explicit Store(std::chrono::milliseconds timeout = kDefaultTimeout) : timeout_(timeout) {}
  virtual ~Store() = default;
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  virtual void set(const std::string& key, const std::vector<uint8_t>& value) = 0;
  // Waits up to timeout() for the key to exist, then returns its value (TimeoutError otherwise).
  virtual std::vector<uint8_t> get(const std::string& key) = 0;
  // Adds delta to the integer stored at key (missing = 0) and returns the new value.
  virtual int64_t add(const std::string& key, int64_t delta) = 0;
  // Sets key to desired if its value equals expected (or it is missing and expected is
  // empty); returns the value after the call.
  virtual std::vector<uint8_t> compare_set(const std::string& key, const std::vector<uint8_t>& expected,
                                           const std::vector<uint8_t>& desired) = 0;
  // True if every key exists (no waiting).
  virtual bool check(const std::vector<std::string>& keys) = 0;
  // Removes key; true if it existed.
  virtual bool delete_key(const std::string& key) = 0;
  virtual int64_t num_keys() = 0;
  // Waits until every key exists; TimeoutError naming the missing keys after `timeout`.
  virtual void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) = 0;

  void wait(const std::vector<std::string>& keys) { wait(keys, timeout_); }
  void set(const std::string& key, const std::string& value) {
    set(key, std::vector<uint8_t>(value.begin(), value.end()));
  }
  std::string get_string(const std::string& key) {
    auto v = get(key);
    return std::string(v.begin(), v.end());
  }

  std::chrono::milliseconds timeout() const { return timeout_; }
  void set_timeout(std::chrono::milliseconds timeout) { timeout_ = timeout; }

 protected:
  std::chrono::milliseconds timeout_;
};

}  // namespace crew::dist
