// Edge cases of the stores: errors that must not cost the connection, "wait forever"
// timeouts, threads sharing one client, clients that die while parked, limits.
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <atomic>
#include <thread>

#include "crew/core/check.h"
#include "crew/core/error.h"
#include "crew/core/timer.h"
#include "crew/distributed/store/hash_store.h"
#include "crew/distributed/store/prefix_store.h"
#include "crew/distributed/store/socket.h"
#include "crew/distributed/store/tcp_store.h"
#include "tests/store/store_test_util.h"
#include "tests/testing/multiprocess.h"

namespace crew::dist {
namespace {

using namespace std::chrono_literals;

using testing_util::client_options;
using testing_util::raw_connect;

TEST(TCPStoreEdge, AddOnANonIntegerValueFailsButKeepsTheConnection) {
  TCPStoreServer server({.insecure = true});
  TCPStore store("127.0.0.1", client_options(server.port()));
  store.set("word", "hello");
  store.set("partial", "12abc");
  for (const char* key : {"word", "partial"}) {
    try {
      store.add(key, 1);
      FAIL() << "add on '" << key << "' must fail";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(server.dropped_clients(), 0u);
  // The same client keeps working and the values are unchanged.
  EXPECT_EQ(store.get_string("word"), "hello");
  EXPECT_EQ(store.get_string("partial"), "12abc");
  EXPECT_EQ(store.add("n", 2), 2);
  EXPECT_THROW(store.add("n", INT64_MAX), ValueError);  // overflow is refused, value kept
  EXPECT_EQ(store.add("n", 0), 2);

  HashStore hash(1s);
  hash.set("word", "hello");
  EXPECT_THROW(hash.add("word", 1), ValueError);
  EXPECT_EQ(hash.get_string("word"), "hello");
  hash.set("n", "2");
  EXPECT_THROW(hash.add("n", INT64_MAX), ValueError);
  EXPECT_EQ(hash.add("n", 0), 2);
}

TEST(TCPStoreEdge, AVeryLongTimeoutDoesNotOverflow) {
  TCPStoreServer server({.insecure = true});
  TCPStore store("127.0.0.1", client_options(server.port()));
  store.set_timeout(std::chrono::milliseconds::max());
  store.set("k", "v");
  EXPECT_EQ(store.get_string("k"), "v");
  store.wait({"k"}, std::chrono::milliseconds::max());
  // A key set later still wakes a "forever" wait.
  std::thread setter([&server] {
    TCPStore other("127.0.0.1", client_options(server.port()));
    std::this_thread::sleep_for(20ms);
    other.set("later", "x");
  });
  store.wait({"later"}, std::chrono::milliseconds::max());
  setter.join();
  EXPECT_EQ(store.get_string("later"), "x");

  HashStore hash(std::chrono::milliseconds::max());
  hash.set("k", "v");
  EXPECT_EQ(hash.get_string("k"), "v");
  hash.wait({"k"}, std::chrono::milliseconds::max());
}

TEST(TCPStoreEdge, ThreadsSharingOneClientKeepTheCounterExact) {
  TCPStoreServer server({.insecure = true});
  TCPStore store("127.0.0.1", client_options(server.port()));
  constexpr int kThreads = 8, kAdds = 200;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&store, t] {
      for (int i = 0; i < kAdds; ++i) {
        store.add("counter", 1);
        store.set("t/" + std::to_string(t), std::to_string(i));
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(store.add("counter", 0), kThreads * kAdds);
  for (int t = 0; t < kThreads; ++t)
    EXPECT_EQ(store.get_string("t/" + std::to_string(t)), std::to_string(kAdds - 1));
}

TEST(TCPStoreEdge, AClientKilledWhileParkedLeavesTheServerServing) {
  TCPStoreServer server({.insecure = true});
  const int port = server.port();
  // Every child parks a long WAIT and is SIGKILLed by run_ranks' deadline.
  auto results = testing::run_ranks(4,
                                    [port](int rank, int) {
                                      TCPStore store("127.0.0.1", client_options(port, 30s));
                                      store.add("parked", 1);
                                      store.wait({"never/" + std::to_string(rank)}, 30s);
                                    },
                                    {.timeout = 1500ms});
  for (auto& r : results) EXPECT_TRUE(r.timed_out) << testing::describe(r);
  TCPStore store("127.0.0.1", client_options(port));
  EXPECT_EQ(store.add("parked", 0), 4);
  // The keys the dead clients waited on can be set, and the server still answers.
  for (int r = 0; r < 4; ++r) store.set("never/" + std::to_string(r), "now");
  store.wait({"never/0", "never/3"}, 1s);
  EXPECT_EQ(server.dropped_clients(), 0u);  // a disconnect is not a protocol fault
}

TEST(TCPStoreEdge, KeyAndValueLimitsAreCheckedWithClearMessages) {
  TCPStoreServerOptions so;
  so.insecure = true;
  so.max_value_bytes = 1024;
  TCPStoreServer server(so);
  TCPStoreOptions o = client_options(server.port());
  o.max_value_bytes = 1024;
  TCPStore store("127.0.0.1", o);
  try {
    store.set(std::string(5000, 'k'), "v");
    FAIL() << "an oversized key must be refused";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("5000"), std::string::npos) << e.what();
  }
  try {
    store.set("big", std::vector<uint8_t>(2048, 1));
    FAIL() << "an oversized value must be refused";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("2048"), std::string::npos) << e.what();
  }
  EXPECT_THROW(store.set("", "v"), ValueError);
  store.set("fits", std::vector<uint8_t>(1024, 7));
  EXPECT_EQ(store.get("fits"), std::vector<uint8_t>(1024, 7));
}

TEST(TCPStoreEdge, ValuesOfSeveralMegabytesRoundTrip) {
  TCPStoreServer server({.insecure = true});
  TCPStore a("127.0.0.1", client_options(server.port()));
  TCPStore b("127.0.0.1", client_options(server.port()));
  std::vector<uint8_t> value(5u << 20);
  for (size_t i = 0; i < value.size(); ++i) value[i] = static_cast<uint8_t>(i * 131 + 7);
  a.set("blob", value);
  EXPECT_EQ(b.get("blob"), value);
}

TEST(TCPStoreEdge, PrefixStoresOverOneServerFromSeveralProcesses) {
  TCPStoreServer server({.insecure = true});
  const int port = server.port();
  auto results =
      testing::run_ranks(3,
                         [port](int rank, int world) {
                           auto base = std::make_shared<TCPStore>("127.0.0.1", client_options(port, 10s));
                           PrefixStore group("pg/7/", base);
                           group.set("addr/" + std::to_string(rank), "rank" + std::to_string(rank));
                           for (int r = 0; r < world; ++r) {
                             std::string v = group.get_string("addr/" + std::to_string(r));
                             CREW_CHECK_EQ(v, "rank" + std::to_string(r));
                           }
                           group.add("arrived", 1);
                         },
                         {.timeout = 30s});
  testing::expect_all_ok(results);
  auto base = std::make_shared<TCPStore>("127.0.0.1", client_options(port));
  EXPECT_EQ(base->get_string("pg/7/addr/2"), "rank2");
  EXPECT_EQ(base->add("pg/7/arrived", 0), 3);
  EXPECT_FALSE(base->check({"addr/0"}));
}

TEST(TCPStoreEdge, TheHostWaitsForNumWorkersToCheckIn) {
  int port = 0;
  { net::Fd fd = net::listen_on("127.0.0.1", 0, 1, &port); }  // free now; rank 0 binds it again
  constexpr int kWorld = 4;
  auto results = testing::run_ranks(kWorld,
                                    [port](int rank, int world) {
                                      TCPStoreOptions o = client_options(port, 20s);
                                      o.is_server = rank == 0;
                                      o.insecure = true;
                                      o.num_workers = world;
                                      TCPStore store("127.0.0.1", o);  // clients retry until rank 0 listens
                                      if (rank == 0) {
                                        // The constructor returned only once every worker had checked in.
                                        CREW_CHECK_EQ(store.add(TCPStore::kWorkersKey, 0), world);
                                        std::vector<std::string> byes;
                                        for (int r = 1; r < world; ++r)
                                          byes.push_back("bye/" + std::to_string(r));
                                        store.wait(byes, 20s);  // keep serving until every client is done
                                      } else {
                                        store.wait({TCPStore::kWorkersReadyKey}, 20s);
                                        store.set("bye/" + std::to_string(rank), "1");
                                      }
                                    },
                                    {.timeout = 60s});
  testing::expect_all_ok(results);
}

TEST(TCPStoreEdge, MissingWorkersTimeOutNamingTheCount) {
  TCPStoreOptions o = client_options(0, 200ms);
  o.is_server = true;
  o.insecure = true;
  o.num_workers = 3;
  try {
    TCPStore host("127.0.0.1", o);
    FAIL() << "expected TimeoutError";
  } catch (const TimeoutError& e) {
    EXPECT_NE(std::string(e.what()).find("1 of 3 workers"), std::string::npos) << e.what();
  }
  o.num_workers = -1;
  EXPECT_THROW(TCPStore("127.0.0.1", o), ValueError);
}

TEST(TCPStoreEdge, AConnectionWithoutHandshakeIsDroppedAfterHelloTimeout) {
  TCPStoreServerOptions so;
  so.insecure = true;
  so.hello_timeout = 100ms;
  TCPStoreServer server(so);
  net::Fd silent = raw_connect(server.port());
  TCPStore good("127.0.0.1", client_options(server.port()));  // handshakes at once: kept
  Deadline deadline(10s);
  while (server.dropped_clients() < 1 && !deadline.expired()) std::this_thread::sleep_for(5ms);
  EXPECT_EQ(server.dropped_clients(), 1u);
  char b;
  EXPECT_EQ(::recv(silent.get(), &b, 1, 0), 0) << "the server should have closed the silent connection";
  std::this_thread::sleep_for(150ms);  // past the hello timeout: the authenticated client stays
  good.set("k", "v");
  EXPECT_EQ(good.get_string("k"), "v");
}

}  // namespace
}  // namespace crew::dist
