// Bad configuration at init_parallel_env, as real processes on 127.0.0.1: two processes with
// one rank, ranks that disagree on the world size, a rank out of range, ranks that never
// come, a master address that does not resolve or that nobody serves, a port in use. Each
// must end in a typed error naming the bad value. The store timeout is set far above the
// run_ranks deadline wherever the error must come from a check rather than a timeout: a
// rank that merely waited would be killed at the deadline and fail the test.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>

#include "crew/core/check.h"
#include "crew/distributed/parallel/parallel.h"
#include "crew/distributed/store/socket.h"
#include "crew/distributed/store/tcp_store.h"
#include "tests/testing/child_expect.h"
#include "tests/testing/multiprocess.h"
#include "tests/testing/net.h"
#include "tests/testing/text.h"

namespace crew::dist {
namespace {

using namespace std::chrono_literals;

using testing::has;

void set_rank(int rank, int world) {
  ::setenv("CREW_RANK", std::to_string(rank).c_str(), 1);
  ::setenv("CREW_WORLD_SIZE", std::to_string(world).c_str(), 1);
  ::setenv("CREW_LOCAL_RANK", std::to_string(rank).c_str(), 1);
  ::setenv("CREW_LOCAL_WORLD_SIZE", std::to_string(world).c_str(), 1);
}

// init_parallel_env must throw E; returns its message (or throws when it did not).
template <typename E>
std::string init_error() {
  return testing::expect_throws<E>([] { init_parallel_env(); });
}

using Env = std::vector<std::pair<std::string, std::string>>;

// Runs fn in one process with `env`, under the 40 s hang guard; it must succeed.
void expect_one_process_ok(Env env, const std::function<void()>& fn) {
  testing::RunRanksOptions o;
  o.timeout = 40s;
  o.env = std::move(env);
  testing::expect_all_ok(testing::run_ranks(
      1, [&](int, int) { fn(); }, o));
}

// Children of one job on a store this test process serves (as the launcher does).
struct Job {
  TCPStoreServer server{{.insecure = true}};
  testing::RunRanksOptions options;
  explicit Job(const std::string& store_timeout = "120s") {
    options.timeout = 40s;  // the hang guard: far below the store timeout
    options.env = {{"CREW_MASTER", "127.0.0.1:" + std::to_string(server.port())},
                   {"CREW_STORE_HOSTED", "1"},
                   {"CREW_STORE_TIMEOUT", store_timeout},
                   {"CREW_BACKEND", "gloo"}};
  }
  std::vector<testing::RankResult> run(int processes, const std::function<void(int)>& fn) {
    return testing::run_ranks(
        processes, [&](int i, int) { fn(i); }, options);
  }
};

TEST(BadConfigFault, TwoProcessesWithOneRankFailEveryRankNamingIt) {
  Job job;
  // Processes 0, 1, 2 take ranks 0, 1, 1 of a world of 3.
  auto results = job.run(3, [](int i) {
    set_rank(i == 2 ? 1 : i, 3);
    const std::string msg = init_error<ValueError>();
    CHILD_EXPECT(has(msg, "rank 1 is claimed twice: by process ") && has(msg, " pid "), msg);
  });
  testing::expect_all_ok(results);
}

TEST(BadConfigFault, RanksThatDisagreeOnTheWorldSizeNameBothSizes) {
  Job job;
  auto results = job.run(3, [](int i) {
    set_rank(i, i == 2 ? 4 : 3);  // rank 2 was told 4, the others 3
    const std::string msg = init_error<ValueError>();
    CHILD_EXPECT(has(msg, "disagrees with world size") &&
                     (has(msg, "world size 4 (crew") || has(msg, "world size 3 (crew")),
                 msg);
    CHILD_EXPECT(has(msg, "disagrees with world size 3") || has(msg, "disagrees with world size 4"), msg);
  });
  testing::expect_all_ok(results);
}

TEST(BadConfigFault, RankOutOfRangeNamesTheRankAndTheWorldSize) {
  Job job;
  auto results = job.run(1, [](int) {
    set_rank(0, 2);
    ::setenv("CREW_RANK", "5", 1);
    const std::string msg = init_error<ValueError>();
    CHILD_EXPECT(has(msg, "rank 5 is out of range for world size 2"), msg);
  });
  testing::expect_all_ok(results);
}

TEST(BadConfigFault, RanksThatNeverArriveAreNamedAtTheStoreTimeout) {
  Job job("2s");
  auto results = job.run(2, [](int i) {
    set_rank(i, 4);  // ranks 2 and 3 are never started
    const std::string msg = init_error<TimeoutError>();
    CHILD_EXPECT(has(msg, "ranks [2, 3] did not arrive within 2000 ms"), msg);
  });
  testing::expect_all_ok(results);
}

TEST(BadConfigFault, AMasterAddressThatDoesNotResolveFailsAtOnceNamingIt) {
  const Env env = {{"CREW_MASTER", "no-such-host.invalid:29555"}, {"CREW_STORE_TIMEOUT", "120s"}};
  expect_one_process_ok(env, [] {
    set_rank(1, 2);
    const std::string msg = init_error<StoreError>();
    CHILD_EXPECT(has(msg, "cannot resolve the store host 'no-such-host.invalid'") && has(msg, "CREW_MASTER"),
                 msg);
  });
}

TEST(BadConfigFault, AnAddressNobodyServesIsRetriedOnlyUntilTheStoreTimeout) {
  int port = 0;
  { net::Fd fd = net::listen_on("127.0.0.1", 0, 1, &port); }  // free now: connections are refused
  const Env env = {{"CREW_MASTER", "127.0.0.1:" + std::to_string(port)}, {"CREW_STORE_TIMEOUT", "2s"}};
  expect_one_process_ok(env, [&] {
    set_rank(1, 2);
    const std::string msg = init_error<StoreError>();
    CHILD_EXPECT(has(msg, "cannot connect to 127.0.0.1:" + std::to_string(port) + " after "), msg);
    CHILD_EXPECT(has(msg, "Connection refused"), msg);
  });
}

TEST(BadConfigFault, RankZeroOnAPortInUseNamesThePort) {
  int port = 0;
  net::Fd busy = net::listen_on("127.0.0.1", 0, 1, &port);  // held for the whole test
  const Env env = {{"CREW_MASTER", "127.0.0.1:" + std::to_string(port)},
                   {"CREW_STORE_HOSTED", "0"},
                   {"CREW_JOB_TOKEN", "t0ken"},
                   {"CREW_STORE_TIMEOUT", "120s"}};
  expect_one_process_ok(env, [&] {
    set_rank(0, 2);
    const std::string msg = init_error<StoreError>();
    CHILD_EXPECT(
        has(msg, "cannot listen on 127.0.0.1:" + std::to_string(port)) && has(msg, "Address already in use"),
        msg);
  });
}

// Started by hand (or srun, mpirun) without a token, rank 0 does not serve a store any local
// user could join: it says how to give one, or how to say that none is wanted.
TEST(BadConfigFault, RankZeroWithoutATokenRefusesToHostTheStore) {
  const Env env = {{"CREW_MASTER", "127.0.0.1:" + std::to_string(testing::free_port())},
                   {"CREW_STORE_HOSTED", "0"},
                   {"CREW_STORE_TIMEOUT", "120s"}};
  expect_one_process_ok(env, [&] {
    ::unsetenv("CREW_JOB_TOKEN");
    ::unsetenv("CREW_INSECURE_STORE");
    set_rank(0, 2);
    const std::string msg = init_error<StoreError>();
    CHILD_EXPECT(has(msg, "init_parallel_env (rank 0)") && has(msg, "no job token is set") &&
                     has(msg, "CREW_JOB_TOKEN_FILE") && has(msg, "CREW_INSECURE_STORE=1"),
                 msg);
  });
}

TEST(BadConfigFault, AWrongJobTokenIsRefusedNamingTheToken) {
  TCPStoreServerOptions so;
  so.job_token = "the-right-one";
  TCPStoreServer server(so);
  const Env env = {{"CREW_MASTER", "127.0.0.1:" + std::to_string(server.port())},
                   {"CREW_STORE_HOSTED", "1"},
                   {"CREW_JOB_TOKEN", "a-wrong-one"},
                   {"CREW_STORE_TIMEOUT", "120s"}};
  expect_one_process_ok(env, [] {
    set_rank(1, 2);
    const std::string msg = init_error<StoreError>();
    CHILD_EXPECT(has(msg, "refused: the client presented a wrong job token") && has(msg, "CREW_JOB_TOKEN"),
                 msg);
  });
  EXPECT_EQ(server.dropped_clients(), 1u);
}

}  // namespace
}  // namespace crew::dist
