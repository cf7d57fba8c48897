// Gloo pairs prove who is on the other end before any collective: each rank sends every peer
// the nonce it published in the store. Gloo 0.5 accepts the first connection to a pair's
// port from anyone; here the store tells rank 0 another nonce than the one on its pair, as if
// an intruder had connected first, and rank 0 must refuse the pair, naming rank 1.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "crew/core/error.h"
#include "crew/distributed/backends/gloo/gloo_process_group.h"
#include "crew/distributed/store/hash_store.h"
#include "tests/testing/text.h"

namespace crew::dist {
namespace {

using std::chrono::milliseconds;
using testing::has;

// A store whose answer for one key differs from what was set: what rank 0 would see if the
// bytes on its pair came from an intruder rather than from rank 1.
class OneKeyLies : public HashStore {
 public:
  explicit OneKeyLies(std::string key) : key_(std::move(key)) {}
  std::vector<uint8_t> get(const std::string& key) override {
    auto v = HashStore::get(key);
    if (key == key_) v[0] ^= 0xff;
    return v;
  }

 private:
  std::string key_;
};

std::vector<std::string> create_groups(const std::shared_ptr<Store>& store, int world) {
  std::vector<std::string> errors(world);
  std::vector<std::thread> threads;
  for (int r = 0; r < world; ++r) {
    threads.emplace_back([&, r] {
      try {
        GlooProcessGroup pg(store, r, world, ProcessGroupOptions{milliseconds(5000), "paircheck"});
        Tensor t = Tensor::full({4}, 1.0);
        pg.all_reduce(t, {.op = ReduceOp::SUM})->wait();
      } catch (const std::exception& e) {
        errors[r] = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  return errors;
}

TEST(GlooPairCheck, HonestPairsPass) {
  const auto errors = create_groups(std::make_shared<HashStore>(), 3);
  for (int r = 0; r < 3; ++r) EXPECT_EQ(errors[r], "") << "rank " << r;
}

TEST(GlooPairCheck, APairWhoseNonceDoesNotMatchIsRefusedBeforeAnyCollective) {
  const auto errors = create_groups(std::make_shared<OneKeyLies>("gloo/pair_nonce/1/0"), 2);
  EXPECT_TRUE(has(errors[0], "the connection to rank 1 did not send the nonce")) << errors[0];
  EXPECT_TRUE(has(errors[0], "gloo rendezvous (rank 0 of 2")) << errors[0];
  EXPECT_NE(errors[1], "") << "rank 1 loses its peer";
}

}  // namespace
}  // namespace crew::dist
