#include "crew/distributed/store/prefix_store.h"

#include "crew/core/check.h"

namespace crew::dist {

PrefixStore::PrefixStore(std::string prefix, std::shared_ptr<Store> store)
    : Store(store ? store->timeout() : kDefaultTimeout),
      prefix_(std::move(prefix)),
      store_(std::move(store)) {
  CREW_CHECK(store_ != nullptr, "PrefixStore: underlying store is null");
}

std::vector<std::string> PrefixStore::prefixed(const std::vector<std::string>& keys) const {
  std::vector<std::string> out;
  out.reserve(keys.size());
  for (auto& k : keys) out.push_back(prefix_ + k);
  return out;
}

void PrefixStore::set(const std::string& key, const std::vector<uint8_t>& value) {
  store_->set(prefix_ + key, value);
}
std::vector<uint8_t> PrefixStore::get(const std::string& key) { return store_->get(prefix_ + key); }
int64_t PrefixStore::add(const std::string& key, int64_t delta) { return store_->add(prefix_ + key, delta); }
std::vector<uint8_t> PrefixStore::compare_set(const std::string& key, const std::vector<uint8_t>& expected,
                                              const std::vector<uint8_t>& desired) {
  return store_->compare_set(prefix_ + key, expected, desired);
}
bool PrefixStore::check(const std::vector<std::string>& keys) { return store_->check(prefixed(keys)); }
bool PrefixStore::delete_key(const std::string& key) { return store_->delete_key(prefix_ + key); }
int64_t PrefixStore::num_keys() { return store_->num_keys(); }
void PrefixStore::wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  store_->wait(prefixed(keys), timeout);
}

}  // namespace crew::dist
