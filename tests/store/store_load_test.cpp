// Load on one TCPStore server: 64 client processes doing atomic adds, sets and gets at once;
// no update may be lost. CREW_STORE_LOAD_OPS sets the adds per client (default 1000 to keep
// the suite fast; issue 8's figure is 10000: CREW_STORE_LOAD_OPS=10000).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "crew/core/check.h"
#include "crew/distributed/store/tcp_store.h"
#include "tests/store/store_test_util.h"
#include "tests/testing/multiprocess.h"

namespace crew::dist {
namespace {

using namespace std::chrono_literals;
using testing_util::client_options;

int ops_per_client() {
  const char* v = std::getenv("CREW_STORE_LOAD_OPS");
  return v ? std::max(1, std::atoi(v)) : 1000;
}

TEST(TCPStoreLoad, SixtyFourClientsLoseNoUpdate) {
  TCPStoreServer server({.insecure = true});
  const int port = server.port();
  constexpr int kClients = 64;
  const int ops = ops_per_client();
  auto results = testing::run_ranks(
      kClients,
      [port, ops](int rank, int world) {
        TCPStoreOptions o = client_options(port, 120s);
        o.connect_timeout = 30s;  // 64 processes connect at once
        TCPStore store("127.0.0.1", o);
        const std::string mine = "load/last/" + std::to_string(rank);
        int64_t previous = 0;
        for (int i = 1; i <= ops; ++i) {
          const int64_t now = store.add("load/counter", 1);
          CREW_CHECK_GT(now, previous);  // the shared counter only grows, as each client sees it
          previous = now;
          if (i % 100 == 0) {
            store.set(mine, std::to_string(i));
            CREW_CHECK_EQ(store.get_string(mine), std::to_string(i));
          }
        }
        store.add("load/finished", 1);
      },
      {.timeout = 300s});
  testing::expect_all_ok(results);
  TCPStore store("127.0.0.1", client_options(port));
  EXPECT_EQ(store.add("load/counter", 0), int64_t{kClients} * ops);
  EXPECT_EQ(store.add("load/finished", 0), kClients);
  EXPECT_EQ(server.dropped_clients(), 0u);
}

}  // namespace
}  // namespace crew::dist
