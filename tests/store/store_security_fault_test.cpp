// The store against clients that should not get in or that send what they should not: no or a
// wrong job token (refused with a reason, and the server logs it with the peer's address),
// requests before the handshake, a value over the server's limit (refused, the connection and
// every other client keep working), and the default listen address (loopback only).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <string>
#include <thread>
#include <vector>

#include "crew/core/timer.h"
#include "crew/distributed/store/socket.h"
#include "crew/distributed/store/tcp_store.h"
#include "crew/distributed/store/tcp_store_protocol.h"
#include "tests/store/store_test_util.h"
#include "tests/testing/text.h"

namespace crew::dist {
namespace {

using namespace std::chrono_literals;
using testing_util::client_options;
using testing_util::raw_connect;

using testing::has;

std::string refusal(const TCPStoreOptions& o) {
  try {
    TCPStore store("127.0.0.1", o);
  } catch (const StoreError& e) {
    return e.what();
  }
  return "(not refused)";
}

TEST(StoreSecurityFault, NoOrAWrongTokenIsRefusedWithAReasonAndLogged) {
  TCPStoreServerOptions so;
  so.job_token = "0123456789abcdef";
  TCPStoreServer server(so);
  TCPStoreOptions none = client_options(server.port());
  TCPStoreOptions wrong = none;
  wrong.job_token = "0123456789abcdeX";  // same length, last byte differs
  TCPStoreOptions right = none;
  right.job_token = so.job_token;

  ::testing::internal::CaptureStderr();
  const std::string no_token = refusal(none);
  const std::string bad_token = refusal(wrong);
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_TRUE(has(no_token, "refused: the client presented no job token")) << no_token;
  EXPECT_TRUE(has(no_token, "127.0.0.1:" + std::to_string(server.port()))) << no_token;
  EXPECT_TRUE(has(bad_token, "refused: the client presented a wrong job token")) << bad_token;
  EXPECT_TRUE(has(bad_token, "--token / CREW_JOB_TOKEN")) << bad_token;
  EXPECT_TRUE(has(log, "refused client 127.0.0.1:")) << log;
  EXPECT_TRUE(has(log, "with no job token")) << log;
  EXPECT_TRUE(has(log, "with a wrong job token")) << log;
  EXPECT_FALSE(has(log, so.job_token)) << "the log must not show the token";
  EXPECT_EQ(server.dropped_clients(), 2u);

  TCPStore ok("127.0.0.1", right);
  ok.set("k", "v");
  EXPECT_EQ(ok.get_string("k"), "v");
}

TEST(StoreSecurityFault, RequestsBeforeTheHandshakeAreNotServed) {
  TCPStoreServerOptions so;
  so.job_token = "secret";
  TCPStoreServer server(so);
  net::Fd raw = raw_connect(server.port());
  detail::BodyWriter set;
  set.bytes(std::string("planted")).bytes(std::string("value"));
  auto frame = set.frame(static_cast<uint8_t>(detail::StoreOp::SET));
  ASSERT_EQ(::send(raw.get(), frame.data(), frame.size(), MSG_NOSIGNAL), static_cast<ssize_t>(frame.size()));
  char b;
  EXPECT_EQ(::recv(raw.get(), &b, 1, 0), 0) << "the server must hang up on a request before HELLO";
  EXPECT_EQ(server.dropped_clients(), 1u);
  TCPStoreOptions o = client_options(server.port());
  o.job_token = "secret";
  TCPStore store("127.0.0.1", o);
  EXPECT_FALSE(store.check({"planted"}));
  EXPECT_EQ(store.num_keys(), 0);
}

TEST(StoreSecurityFault, AValueOverTheServersLimitIsRefusedAndEveryoneKeepsWorking) {
  TCPStoreServerOptions so;
  so.insecure = true;
  so.max_value_bytes = 1024;
  TCPStoreServer server(so);
  // A client configured with a larger limit than the server (so its own check passes).
  TCPStoreOptions big = client_options(server.port());
  big.max_value_bytes = 1u << 20;
  TCPStore sender("127.0.0.1", big);
  TCPStore other("127.0.0.1", client_options(server.port()));
  try {
    sender.set("huge", std::vector<uint8_t>(4096, 1));
    FAIL() << "the server must refuse a value over its limit";
  } catch (const ValueError& e) {
    const std::string msg = e.what();
    EXPECT_TRUE(has(msg, "set 'huge'")) << msg;
    EXPECT_TRUE(has(msg, "value of 4096 bytes is over this store's limit of 1024 bytes")) << msg;
  }
  EXPECT_FALSE(other.check({"huge"}));
  sender.set("small", std::vector<uint8_t>(1024, 2));  // the same connection still works
  EXPECT_EQ(other.get("small"), std::vector<uint8_t>(1024, 2));
  EXPECT_EQ(other.add("n", 1), 1);
  EXPECT_EQ(sender.add("n", 1), 2);
  EXPECT_EQ(server.dropped_clients(), 0u);
}

// The first IPv4 address of this host that is not loopback, or "".
std::string non_loopback_ipv4() {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return "";
  std::string out;
  for (ifaddrs* a = list; a && out.empty(); a = a->ifa_next) {
    if (!a->ifa_addr || a->ifa_addr->sa_family != AF_INET) continue;
    auto* in = reinterpret_cast<sockaddr_in*>(a->ifa_addr);
    if ((ntohl(in->sin_addr.s_addr) >> 24) == 127) continue;
    char buf[INET_ADDRSTRLEN] = {};
    ::inet_ntop(AF_INET, &in->sin_addr, buf, sizeof(buf));
    out = buf;
  }
  ::freeifaddrs(list);
  return out;
}

TEST(StoreSecurityFault, TheDefaultServerIsReachableOnLoopbackOnly) {
  const std::string external = non_loopback_ipv4();
  if (external.empty()) GTEST_SKIP() << "this host has no non-loopback IPv4 address to try";
  TCPStoreServer server({.insecure = true});  // default options: host 127.0.0.1
  std::string err;
  net::Fd local = net::try_connect("127.0.0.1", server.port(), 2s, &err);
  EXPECT_TRUE(local.valid()) << err;
  net::Fd outside = net::try_connect(external, server.port(), 2s, &err);
  EXPECT_FALSE(outside.valid()) << "the store answered on " << external << ":" << server.port();
}

}  // namespace
}  // namespace crew::dist
