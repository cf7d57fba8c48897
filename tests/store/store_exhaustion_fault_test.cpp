// The store against what could exhaust it or let anyone in: a server without a token (refused
// unless insecure is explicit), clients that never authenticate but announce a huge frame
// (dropped after the header, the server's memory stays flat), a flood of idle connections
// under a low fd limit (no spinning, capped below RLIMIT_NOFILE, the real clients keep being
// served) and a client that sends requests but never reads the replies (no longer read from).
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "crew/distributed/store/socket.h"
#include "crew/distributed/store/tcp_store.h"
#include "crew/distributed/store/tcp_store_protocol.h"
#include "tests/store/store_test_util.h"
#include "tests/testing/text.h"

namespace crew::dist {
namespace {

using namespace std::chrono_literals;
using testing::has;
using testing_util::client_options;
using testing_util::raw_connect;

// This process's resident set in bytes (VmRSS).
size_t rss_bytes() {
  const std::string status = testing::read_file("/proc/self/status");
  const size_t at = status.find("VmRSS:");
  return at == std::string::npos ? 0 : std::strtoull(status.c_str() + at + 6, nullptr, 10) * 1024;
}

// True once the peer closed the connection (EOF or reset) within `timeout`.
bool closed_by_peer(int fd, std::chrono::milliseconds timeout) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  char buf[4096];
  while (std::chrono::steady_clock::now() < end) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0) continue;
    const ssize_t r = ::recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
    if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) return true;
  }
  return false;
}

std::vector<uint8_t> frame(detail::StoreOp op, const detail::BodyWriter& body) {
  return body.frame(static_cast<uint8_t>(op));
}

TEST(StoreExhaustionFault, AServerWithoutATokenRefusesToStartUnlessInsecureIsExplicit) {
  try {
    TCPStoreServer server;
    ADD_FAILURE() << "a tokenless server started on port " << server.port();
  } catch (const StoreError& e) {
    EXPECT_TRUE(has(e.what(), "without a job token")) << e.what();
    EXPECT_TRUE(has(e.what(), "CREW_INSECURE_STORE=1")) << e.what();
  }
  TCPStoreOptions hosted = client_options(0);
  hosted.is_server = true;
  EXPECT_THROW(TCPStore("127.0.0.1", hosted), StoreError) << "a hosted server alike";
  TCPStoreServer insecure({.insecure = true});
  TCPStore client("127.0.0.1", client_options(insecure.port()));
  client.set("k", "v");
  EXPECT_EQ(client.get_string("k"), "v");
}

// Each hostile client announces a 100 MiB frame and then streams 8 MiB: today's server would
// buffer it all before looking at the HELLO (64 MiB for 8 clients).
TEST(StoreExhaustionFault, UnauthenticatedClientsCannotMakeTheServerBufferAFrame) {
  TCPStoreServer server({.job_token = "secret", .hello_timeout = 60s});
  std::vector<uint8_t> chunk(1 << 20, 0);
  const size_t before = rss_bytes();
  std::vector<net::Fd> hostile;
  std::vector<std::thread> senders;
  for (int i = 0; i < 8; ++i) hostile.push_back(raw_connect(server.port()));
  for (auto& fd : hostile) {
    senders.emplace_back([&chunk, f = fd.get()] {
      uint8_t header[detail::kFrameHeaderBytes];
      detail::encode_header(static_cast<uint8_t>(detail::StoreOp::HELLO), 100u << 20, header);
      std::string error;
      const auto deadline = std::chrono::steady_clock::now() + 10s;
      if (!net::send_all(f, header, sizeof(header), deadline, &error)) return;
      for (int mib = 0; mib < 8; ++mib)
        if (!net::send_all(f, chunk.data(), chunk.size(), deadline, &error)) return;
    });
  }
  for (auto& t : senders) t.join();
  std::this_thread::sleep_for(200ms);  // what arrived is read by now
  const size_t growth = rss_bytes() - std::min(before, rss_bytes());
  EXPECT_LT(growth, 4u << 20) << "the server buffered " << growth << " bytes for 8 unauthenticated clients";
  // At once, not at the handshake deadline.
  for (auto& fd : hostile) EXPECT_TRUE(closed_by_peer(fd.get(), 5s)) << "the server must drop the client";
  EXPECT_EQ(server.dropped_clients(), 8u);
  TCPStoreOptions o = client_options(server.port());
  o.job_token = "secret";
  TCPStore ok("127.0.0.1", o);
  ok.set("after", "fine");
  EXPECT_EQ(ok.get_string("after"), "fine");
}

// 200 GETs of a 1 MiB value from a client that does not read: today's server queued all 200
// MiB of replies. Now it holds the requests back once 4 MiB are queued, and answers every one
// in order once the client reads.
TEST(StoreExhaustionFault, AClientThatNeverReadsRepliesIsNoLongerReadFrom) {
  TCPStoreServer server({.insecure = true});
  TCPStore writer("127.0.0.1", client_options(server.port()));
  const std::string big(1 << 20, 'x');
  writer.set("big", big);
  const size_t before = rss_bytes();

  net::Fd raw = raw_connect(server.port());
  detail::BodyWriter hello;
  hello.u32(detail::kStoreVersion).bytes(std::string());
  std::vector<uint8_t> requests = frame(detail::StoreOp::HELLO, hello);
  constexpr int kGets = 200;
  for (int i = 0; i < kGets; ++i) {
    detail::BodyWriter get;
    get.i64(0).bytes(std::string("big"));
    auto f = frame(detail::StoreOp::GET, get);
    requests.insert(requests.end(), f.begin(), f.end());
  }
  std::string error;
  ASSERT_TRUE(net::send_all(raw.get(), requests.data(), requests.size(),
                            std::chrono::steady_clock::now() + 5s, &error))
      << error;
  std::this_thread::sleep_for(1s);  // time to queue everything, as today's server did
  const size_t growth = rss_bytes() - std::min(before, rss_bytes());
  EXPECT_LT(growth, 32u << 20) << "the server queued " << growth << " bytes of replies nobody reads";
  writer.set("other", "served");  // the others keep being served meanwhile
  EXPECT_EQ(writer.get_string("other"), "served");

  std::vector<uint8_t> header(detail::kFrameHeaderBytes);
  std::vector<uint8_t> body;
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  ASSERT_TRUE(net::recv_all(raw.get(), header.data(), header.size(), deadline, &error)) << error;
  ASSERT_EQ(detail::decode_header(header.data()).code, static_cast<uint8_t>(detail::StoreStatus::OK));
  for (int i = 0; i < kGets; ++i) {
    ASSERT_TRUE(net::recv_all(raw.get(), header.data(), header.size(), deadline, &error))
        << i << ": " << error;
    const detail::FrameHeader h = detail::decode_header(header.data());
    ASSERT_EQ(h.code, static_cast<uint8_t>(detail::StoreStatus::OK)) << i;
    ASSERT_EQ(h.body_len, 4u + big.size()) << i;
    body.resize(h.body_len);
    ASSERT_TRUE(net::recv_all(raw.get(), body.data(), body.size(), deadline, &error)) << i << ": " << error;
  }
}

TEST(StoreExhaustionFault, MaxClientsStaysBelowTheFdLimit) {
  rlimit saved{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &saved), 0);
  rlimit low = saved;
  low.rlim_cur = 256;
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &low), 0);
  size_t max_clients = 0;
  {
    TCPStoreServer server({.insecure = true});
    max_clients = server.max_clients();
  }
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &saved), 0);
  EXPECT_LE(max_clients, 256u - TCPStoreServerOptions::kReservedFds);
  EXPECT_GT(max_clients, 0u);
}

// CPU seconds (user + system) that process `pid` has used.
double cpu_seconds(pid_t pid) {
  const std::string stat = testing::read_file("/proc/" + std::to_string(pid) + "/stat");
  const size_t close = stat.rfind(')');
  if (close == std::string::npos) return 0;
  std::vector<std::string> fields;
  size_t pos = close + 2;
  while (pos < stat.size() && fields.size() < 13) {
    const size_t end = stat.find(' ', pos);
    fields.push_back(stat.substr(pos, end - pos));
    pos = end == std::string::npos ? stat.size() : end + 1;
  }
  if (fields.size() < 13) return 0;
  return (std::stod(fields[11]) + std::stod(fields[12])) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

// The server runs in a child with `ulimit -n 64`; 150 idle connections arrive. Today's server
// accepted until EMFILE and then spun on the listening socket (a core at 100%).
TEST(StoreExhaustionFault, IdleConnectionsUnderALowFdLimitNeitherSpinNorLockOutTheJob) {
  int port_pipe[2];
  int stop_pipe[2];
  ASSERT_EQ(::pipe(port_pipe), 0);
  ASSERT_EQ(::pipe(stop_pipe), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(port_pipe[0]);
    ::close(stop_pipe[1]);
    rlimit low{64, 64};
    if (::setrlimit(RLIMIT_NOFILE, &low) != 0) ::_exit(3);
    try {
      TCPStoreServer server({.job_token = "secret", .hello_timeout = 3s});
      const int port = server.port();
      if (::write(port_pipe[1], &port, sizeof(port)) != sizeof(port)) ::_exit(4);
      char b;
      while (::read(stop_pipe[0], &b, 1) > 0) {
      }
    } catch (...) {
      ::_exit(5);
    }
    ::_exit(0);
  }
  ::close(port_pipe[1]);
  ::close(stop_pipe[0]);
  int port = 0;
  ASSERT_EQ(::read(port_pipe[0], &port, sizeof(port)), static_cast<ssize_t>(sizeof(port)));
  ::close(port_pipe[0]);

  TCPStoreOptions o = client_options(port);
  o.job_token = "secret";
  TCPStore job("127.0.0.1", o);  // a real client, connected before the flood
  job.set("before", "1");
  std::vector<net::Fd> idle;
  for (int i = 0; i < 150; ++i) idle.push_back(raw_connect(port));
  std::this_thread::sleep_for(200ms);
  const double cpu_before = cpu_seconds(child);
  std::this_thread::sleep_for(1500ms);
  const double busy = cpu_seconds(child) - cpu_before;
  EXPECT_LT(busy, 0.5) << "the store used " << busy << " s of CPU in 1.5 s with idle connections (spinning)";
  EXPECT_EQ(job.get_string("before"), "1") << "the job's client is still served";
  job.set("during", "2");
  idle.clear();
  std::this_thread::sleep_for(300ms);
  TCPStore late("127.0.0.1", o);  // and a client that connects afterwards
  EXPECT_EQ(late.get_string("during"), "2");

  ::close(stop_pipe[1]);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
}

}  // namespace
}  // namespace crew::dist
