#include "crew/distributed/store/hash_store.h"

#include <algorithm>
#include <charconv>

#include "crew/core/check.h"

namespace crew::dist {
namespace {

// condition_variable::wait_for adds the timeout to now(): saturate "forever" (milliseconds::max())
// so the time point does not overflow.
std::chrono::milliseconds capped(std::chrono::milliseconds timeout) {
  return std::min(timeout, detail::kMaxWait);
}

}  // namespace

void HashStore::set(const std::string& key, const std::vector<uint8_t>& value) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    data_[key] = value;
  }
  cv_.notify_all();
}

std::vector<uint8_t> HashStore::get(const std::string& key) {
  std::unique_lock<std::mutex> lock(mu_);
  bool ok = cv_.wait_for(lock, capped(timeout_), [&] { return data_.count(key) > 0; });
  CREW_CHECK_T(TimeoutError, ok, "HashStore get '", key, "': the key did not appear within ",
               timeout_.count(), " ms");
  return data_[key];
}

int64_t HashStore::add(const std::string& key, int64_t delta) {
  int64_t value = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = data_.find(key);
    if (it != data_.end()) {
      const char* begin = reinterpret_cast<const char*>(it->second.data());
      const char* end = begin + it->second.size();
      auto [ptr, ec] = std::from_chars(begin, end, value);
      CREW_CHECK(ec == std::errc() && ptr == end && begin != end, "HashStore add on key '", key,
                 "': its value is not a decimal integer (", it->second.size(), " bytes)");
    }
    CREW_CHECK(!__builtin_add_overflow(value, delta, &value), "HashStore add on key '", key, "': ", delta,
               " overflows int64");
    std::string s = std::to_string(value);
    data_[key] = std::vector<uint8_t>(s.begin(), s.end());
  }
  cv_.notify_all();
  return value;
}

std::vector<uint8_t> HashStore::compare_set(const std::string& key, const std::vector<uint8_t>& expected,
                                            const std::vector<uint8_t>& desired) {
  std::vector<uint8_t> result;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = data_.find(key);
    if ((it == data_.end() && expected.empty()) || (it != data_.end() && it->second == expected)) {
      data_[key] = desired;
      result = desired;
    } else if (it != data_.end()) {
      result = it->second;
    }
  }
  cv_.notify_all();
  return result;
}

bool HashStore::has_all(const std::vector<std::string>& keys) const {
  for (auto& k : keys)
    if (!data_.count(k)) return false;
  return true;
}

bool HashStore::check(const std::vector<std::string>& keys) {
  std::lock_guard<std::mutex> lock(mu_);
  return has_all(keys);
}

bool HashStore::delete_key(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  return data_.erase(key) > 0;
}

int64_t HashStore::num_keys() {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int64_t>(data_.size());
}

void HashStore::wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  if (cv_.wait_for(lock, capped(timeout), [&] { return has_all(keys); })) return;
  std::string missing;
  for (auto& k : keys)
    if (!data_.count(k)) missing += (missing.empty() ? "'" : ", '") + k + "'";
  CREW_THROW(TimeoutError, "HashStore wait: keys ", missing, " did not appear within ", timeout.count(),
             " ms");
}

}  // namespace crew::dist
