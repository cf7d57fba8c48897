#pragma once
// Presents a crew Store to Gloo's rendezvous (internal to the gloo backend): Gloo's
// connectFullMesh publishes each rank's address under "rank_<r>" and reads the others'.
#include <gloo/rendezvous/store.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "crew/distributed/store/store.h"

namespace crew::dist::detail {

class GlooStoreAdapter : public ::gloo::rendezvous::Store {
 public:
  GlooStoreAdapter(std::shared_ptr<crew::dist::Store> store, std::chrono::milliseconds timeout)
      : store_(std::move(store)), timeout_(timeout) {}

  void set(const std::string& key, const std::vector<char>& data) override {
    store_->set(key, std::vector<uint8_t>(data.begin(), data.end()));
  }
  std::vector<char> get(const std::string& key) override {
    store_->wait({key}, timeout_);
    auto value = store_->get(key);
    return std::vector<char>(value.begin(), value.end());
  }
  void wait(const std::vector<std::string>& keys) override { store_->wait(keys, timeout_); }
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override {
    store_->wait(keys, timeout);
  }

 private:
  std::shared_ptr<crew::dist::Store> store_;
  std::chrono::milliseconds timeout_;
};

}  // namespace crew::dist::detail
