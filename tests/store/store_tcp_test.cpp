#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <thread>

#include "crew/core/timer.h"
#include "crew/distributed/store/hash_store.h"
#include "crew/distributed/store/prefix_store.h"
#include "crew/distributed/store/socket.h"
#include "crew/distributed/store/tcp_store.h"
#include "crew/distributed/store/tcp_store_protocol.h"
#include "tests/store/store_test_util.h"
#include "tests/testing/multiprocess.h"

namespace crew::dist {
namespace {

using namespace std::chrono_literals;

using testing_util::client_options;
using testing_util::raw_connect;

std::vector<uint8_t> bytes(const std::string& s) { return {s.begin(), s.end()}; }

TEST(TCPStore, BasicOperations) {
  TCPStoreServer server({.insecure = true});
  ASSERT_GT(server.port(), 0);
  TCPStore store("127.0.0.1", client_options(server.port()));
  store.set("a", "hello");
  EXPECT_EQ(store.get_string("a"), "hello");
  EXPECT_EQ(store.add("n", 5), 5);
  EXPECT_EQ(store.add("n", -2), 3);
  EXPECT_TRUE(store.check({"a", "n"}));
  EXPECT_FALSE(store.check({"a", "missing"}));
  EXPECT_EQ(store.num_keys(), 2);
  EXPECT_EQ(store.compare_set("c", {}, bytes("x")), bytes("x"));
  EXPECT_EQ(store.compare_set("c", bytes("y"), bytes("z")), bytes("x"));  // expected mismatch: unchanged
  EXPECT_EQ(store.compare_set("c", bytes("x"), bytes("z")), bytes("z"));
  EXPECT_TRUE(store.delete_key("c"));
  EXPECT_FALSE(store.delete_key("c"));
  store.set("empty", std::vector<uint8_t>{});
  EXPECT_TRUE(store.get("empty").empty());
}

TEST(TCPStore, HostedServerAndWaitAcrossThreads) {
  TCPStoreOptions o = client_options(0);
  o.is_server = true;
  o.insecure = true;
  TCPStore host("127.0.0.1", o);
  TCPStore other("127.0.0.1", client_options(host.port()));
  std::thread setter([&] {
    std::this_thread::sleep_for(50ms);
    other.set("late", "v");
  });
  host.wait({"late"}, 5s);
  EXPECT_EQ(host.get_string("late"), "v");
  setter.join();
}

TEST(TCPStore, GetOfMissingKeyTimesOutNamingTheKey) {
  TCPStoreServer server({.insecure = true});
  TCPStore store("127.0.0.1", client_options(server.port(), 200ms));
  Stopwatch clock;
  try {
    store.get("never");
    FAIL() << "expected TimeoutError";
  } catch (const TimeoutError& e) {
    EXPECT_NE(std::string(e.what()).find("'never'"), std::string::npos) << e.what();
  }
  EXPECT_LT(clock.seconds(), 5.0);
  // The connection stays usable after a server-side timeout.
  store.set("k", "v");
  EXPECT_EQ(store.get_string("k"), "v");
  try {
    store.wait({"k", "missing1"}, 100ms);
    FAIL() << "expected TimeoutError";
  } catch (const TimeoutError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("missing1"), std::string::npos) << msg;
    EXPECT_EQ(msg.find("'k'"), std::string::npos) << msg;
  }
}

TEST(TCPStore, SixteenClientProcessesKeepTheCounterExact) {
  TCPStoreServer server({.insecure = true});
  const int port = server.port();
  constexpr int kClients = 16;
  constexpr int kAdds = 100;
  auto results = testing::run_ranks(kClients,
                                    [&](int rank, int world) {
                                      TCPStore store("127.0.0.1", client_options(port, 20s));
                                      for (int i = 0; i < kAdds; ++i) {
                                        store.add("counter", 1);
                                        store.set("rank/" + std::to_string(rank), std::to_string(i));
                                      }
                                      store.add("done", 1);
                                      std::vector<std::string> keys;
                                      for (int r = 0; r < world; ++r)
                                        keys.push_back("rank/" + std::to_string(r));
                                      store.wait(keys, 20s);
                                      for (int r = 0; r < world; ++r)
                                        (void)store.get("rank/" + std::to_string(r));
                                    },
                                    {.timeout = 60s});
  testing::expect_all_ok(results);
  TCPStore store("127.0.0.1", client_options(port));
  EXPECT_EQ(store.add("counter", 0), kClients * kAdds);
  EXPECT_EQ(store.add("done", 0), kClients);
}

TEST(TCPStore, MalformedClientIsDroppedAndOthersKeepWorking) {
  TCPStoreServer server({.insecure = true});
  TCPStore good("127.0.0.1", client_options(server.port()));
  good.set("x", "1");
  // Garbage bytes.
  net::Fd bad = raw_connect(server.port());
  const char junk[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
  ASSERT_GT(::send(bad.get(), junk, sizeof(junk), MSG_NOSIGNAL), 0);
  // A well-formed header announcing an oversized body.
  net::Fd big = raw_connect(server.port());
  uint8_t header[detail::kFrameHeaderBytes];
  detail::encode_header(static_cast<uint8_t>(detail::StoreOp::HELLO), 0xfffffff0u, header);
  ASSERT_GT(::send(big.get(), header, sizeof(header), MSG_NOSIGNAL), 0);
  Deadline deadline(5s);
  while (server.dropped_clients() < 2 && !deadline.expired()) std::this_thread::sleep_for(5ms);
  EXPECT_GE(server.dropped_clients(), 2u);
  char b;
  EXPECT_EQ(::recv(bad.get(), &b, 1, 0), 0) << "the server should have closed the bad connection";
  EXPECT_EQ(good.get_string("x"), "1");
  good.set("y", "2");
  EXPECT_EQ(good.add("n", 1), 1);
}

TEST(TCPStore, ServerGoneMidRequestFailsTheCall) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  pid_t pid = ::fork();
  if (pid == 0) {
    TCPStoreServer server({.insecure = true});
    int port = server.port();
    (void)!::write(fds[1], &port, sizeof(port));
    ::pause();
    ::_exit(0);
  }
  int port = 0;
  ASSERT_EQ(::read(fds[0], &port, sizeof(port)), static_cast<ssize_t>(sizeof(port)));
  TCPStore store("127.0.0.1", client_options(port, 30s));
  store.set("a", "b");
  std::thread killer([pid] {
    std::this_thread::sleep_for(100ms);
    ::kill(pid, SIGKILL);
  });
  Stopwatch clock;
  EXPECT_THROW(store.get("never-set"), StoreError);
  EXPECT_LT(clock.seconds(), 10.0);
  killer.join();
  ::waitpid(pid, nullptr, 0);
  EXPECT_THROW(store.set("again", "x"), StoreError);  // the connection is known to be lost
}

TEST(TCPStore, JobTokenIsRequired) {
  TCPStoreServerOptions so;
  so.job_token = "s3cret";
  TCPStoreServer server(so);
  try {
    TCPStore anon("127.0.0.1", client_options(server.port()));
    FAIL() << "a client without the token must be refused";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("token"), std::string::npos) << e.what();
  }
  TCPStoreOptions o = client_options(server.port());
  o.job_token = "s3cret";
  TCPStore ok("127.0.0.1", o);
  ok.set("k", "v");
  EXPECT_EQ(ok.get_string("k"), "v");
}

TEST(TCPStore, ConnectFailureNamesTheAddress) {
  int port = 0;
  { net::Fd fd = net::listen_on("127.0.0.1", 0, 1, &port); }  // a port nobody listens on now
  TCPStoreOptions o = client_options(port);
  o.connect_timeout = 300ms;
  Stopwatch clock;
  try {
    TCPStore store("127.0.0.1", o);
    FAIL() << "expected StoreError";
  } catch (const StoreError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("127.0.0.1:" + std::to_string(port)), std::string::npos) << msg;
    EXPECT_NE(msg.find("CREW_MASTER"), std::string::npos) << msg;
  }
  EXPECT_LT(clock.seconds(), 5.0);
}

TEST(TCPStore, ClientRetriesUntilTheServerListens) {
  int port = 0;
  { net::Fd fd = net::listen_on("127.0.0.1", 0, 1, &port); }
  std::unique_ptr<TCPStoreServer> server;
  std::thread starter([&] {
    std::this_thread::sleep_for(150ms);
    TCPStoreServerOptions so;
    so.insecure = true;
    so.port = port;
    server = std::make_unique<TCPStoreServer>(so);
  });
  TCPStore store("127.0.0.1", client_options(port));
  starter.join();
  store.set("k", "v");
  EXPECT_EQ(store.get_string("k"), "v");
}

TEST(TCPStore, BusyPortGivesAClearError) {
  TCPStoreServer first({.insecure = true});
  TCPStoreServerOptions so;
  so.insecure = true;
  so.port = first.port();
  try {
    TCPStoreServer second(so);
    FAIL() << "expected StoreError";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find(std::to_string(first.port())), std::string::npos) << e.what();
  }
}

TEST(HashStore, OperationsAndTimeouts) {
  HashStore store(100ms);
  store.set("a", "1");
  EXPECT_EQ(store.get_string("a"), "1");
  EXPECT_EQ(store.add("a", 2), 3);
  EXPECT_THROW(store.get("b"), TimeoutError);
  EXPECT_THROW(store.wait({"a", "b"}, 50ms), TimeoutError);
  std::thread t([&] { store.set("b", "x"); });
  store.wait({"b"}, 2s);
  t.join();
  EXPECT_EQ(store.num_keys(), 2);
}

TEST(PrefixStore, NamespacesKeys) {
  auto base = std::make_shared<HashStore>(100ms);
  PrefixStore a("a/", base);
  PrefixStore b("b/", base);
  a.set("k", "1");
  b.set("k", "2");
  EXPECT_EQ(a.get_string("k"), "1");
  EXPECT_EQ(b.get_string("k"), "2");
  EXPECT_EQ(base->get_string("a/k"), "1");
  EXPECT_TRUE(a.check({"k"}));
  EXPECT_FALSE(a.check({"other"}));
  EXPECT_EQ(a.add("n", 4), 4);
  EXPECT_TRUE(a.delete_key("n"));
}

}  // namespace
}  // namespace crew::dist
