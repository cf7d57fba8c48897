// crew::dist::spawn: children run the function (not main), with the parallel environment;
// results come back; a failing child stops the others and surfaces as SpawnError.
#include "crew/distributed/spawn/spawn.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <thread>

#include "crew/core/error.h"
#include "crew/core/parallel_env.h"
#include "crew/distributed/store/tcp_store.h"

namespace crew::dist {
namespace {

std::string describe_env(int tag, std::string label) {
  ParallelEnv env = ParallelEnv::from_env();
  return label + " tag=" + std::to_string(tag) + " rank=" + std::to_string(env.rank) + "/" +
         std::to_string(env.world_size) + " dev=" + std::to_string(env.device_id) +
         " hosted=" + std::getenv("CREW_STORE_HOSTED") + " master=" + env.master_endpoint() +
         " child=" + (is_spawned_child() ? "yes" : "no");
}

std::vector<int64_t> squares(int n) {
  std::vector<int64_t> out;
  for (int i = 0; i <= n + ParallelEnv::from_env().rank; ++i) out.push_back(int64_t{i} * i);
  return out;
}

void fail_on_rank_one() {
  if (ParallelEnv::from_env().rank == 1) throw ValueError("rank one says no");
  ::sleep(30);  // must be stopped by the parent
}

void die_by_signal() {
  if (ParallelEnv::from_env().rank == 0) ::raise(SIGKILL);
  ::sleep(30);
}

void exit_with_code() { std::exit(ParallelEnv::from_env().rank == 1 ? 4 : 0); }

void sleep_long() { ::sleep(30); }

// Where the child's environment differs from its ParallelEnv's to_env() ("" = nowhere).
std::string env_mismatches() {
  const ParallelEnv env = ParallelEnv::from_env();
  std::string out = env.source == "crew" ? "" : "source " + env.source + "; ";
  if (env.job_token == "an-enclosing-jobs-secret") out += "inherited the job token; ";
  if (env.job_token.size() != 32) out += "no 32-digit job token of its own; ";
  for (const EnvVar& v : env.to_env()) {
    const char* have = std::getenv(v.name.c_str());
    if (v.value.empty() ? have != nullptr : (!have || have != v.value)) {
      out += v.name + "=" + (have ? have : "(unset)") + " not '" + v.value + "'; ";
    }
  }
  return out;
}

// Every child meets the others in the store the parent serves.
std::string store_round_trip() {
  ParallelEnv env = ParallelEnv::from_env();
  TCPStore store(env.master_addr, TCPStoreOptions{.port = env.master_port,
                                                  .timeout = std::chrono::seconds(20),
                                                  .connect_timeout = std::chrono::seconds(20),
                                                  .job_token = env.job_token});
  store.set("spawn_test/" + std::to_string(env.rank), "from " + std::to_string(env.rank));
  const int peer = (env.rank + 1) % env.world_size;
  return store.get_string("spawn_test/" + std::to_string(peer));
}

// A client without the spawn's token: what the parent's store answers.
std::string connect_without_token() {
  ParallelEnv env = ParallelEnv::from_env();
  try {
    TCPStore store(env.master_addr, TCPStoreOptions{.port = env.master_port,
                                                    .timeout = std::chrono::seconds(20),
                                                    .connect_timeout = std::chrono::seconds(20)});
    return "admitted";
  } catch (const StoreError& e) {
    return e.what();
  }
}

TEST(Spawn, TheParentsStoreRefusesAClientWithoutTheToken) {
  SpawnContext ctx = spawn(connect_without_token, SpawnOptions{.nprocs = 1});
  EXPECT_THAT(ctx.result<std::string>(0), ::testing::HasSubstr("refused: the client presented no job token"));
}

TEST(Spawn, ChildrenRunTheFunctionWithTheirEnvironment) {
  SpawnContext ctx = spawn(describe_env, 7, std::string("hi"), SpawnOptions{.devices = "1,3"});
  ASSERT_EQ(ctx.nprocs(), 2);
  const std::string r0 = ctx.result<std::string>(0);
  const std::string r1 = ctx.result<std::string>(1);
  EXPECT_EQ(r0.rfind("hi tag=7 rank=0/2 dev=1 hosted=1 master=127.0.0.1:", 0), 0u) << r0;
  EXPECT_EQ(r1.rfind("hi tag=7 rank=1/2 dev=3 hosted=1 master=127.0.0.1:", 0), 0u) << r1;
  EXPECT_NE(r0.find("child=yes"), std::string::npos);
  EXPECT_FALSE(is_spawned_child());
}

TEST(Spawn, ChildrenGetTheLaunchersParallelVariables) {
  ::setenv("CREW_JOB_TOKEN", "an-enclosing-jobs-secret", 1);
  SpawnContext ctx = spawn(env_mismatches, SpawnOptions{.nprocs = 2});
  ::unsetenv("CREW_JOB_TOKEN");
  EXPECT_EQ(ctx.result<std::string>(0), "");
  EXPECT_EQ(ctx.result<std::string>(1), "");
}

TEST(Spawn, ResultsOfEachRankComeBack) {
  SpawnContext ctx = spawn(squares, 2, SpawnOptions{.nprocs = 3});
  EXPECT_EQ(ctx.result<std::vector<int64_t>>(0), (std::vector<int64_t>{0, 1, 4}));
  EXPECT_EQ(ctx.result<std::vector<int64_t>>(2), (std::vector<int64_t>{0, 1, 4, 9, 16}));
}

TEST(Spawn, TheParentServesTheStore) {
  SpawnContext ctx = spawn(store_round_trip, SpawnOptions{.nprocs = 3});
  EXPECT_EQ(ctx.result<std::string>(0), "from 1");
  EXPECT_EQ(ctx.result<std::string>(2), "from 0");
}

TEST(Spawn, SafeToCallWithThreadsRunning) {
  std::atomic<bool> stop{false};
  std::vector<std::thread> busy;
  for (int i = 0; i < 4; ++i) {
    busy.emplace_back([&] {
      std::vector<int> v;
      while (!stop) {
        v.push_back(1);  // keeps the allocator's locks busy while spawn forks
        if (v.size() > 1000) v.clear();
      }
    });
  }
  SpawnContext ctx = spawn(squares, 1, SpawnOptions{.nprocs = 4});
  stop = true;
  for (auto& t : busy) t.join();
  EXPECT_EQ(ctx.result<std::vector<int64_t>>(3).size(), 5u);
}

TEST(Spawn, AThrowingChildStopsTheOthersAndNamesItsRank) {
  try {
    spawn(fail_on_rank_one, SpawnOptions{.nprocs = 3, .grace_period = std::chrono::milliseconds(500)});
    FAIL() << "spawn must throw";
  } catch (const SpawnError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("process 1 (pid "), std::string::npos) << what;
    EXPECT_NE(what.find("terminated with the following error:\nrank one says no"), std::string::npos) << what;
  }
}

TEST(Spawn, SignalAndExitCodeDeathsAreReported) {
  try {
    spawn(die_by_signal, SpawnOptions{.nprocs = 2});
    FAIL() << "spawn must throw";
  } catch (const SpawnError& e) {
    EXPECT_NE(std::string(e.what()).find("process 0 (pid "), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("signal SIGKILL (9)"), std::string::npos) << e.what();
  }
  try {
    spawn(exit_with_code, SpawnOptions{.nprocs = 2});
    FAIL() << "spawn must throw";
  } catch (const SpawnError& e) {
    EXPECT_NE(std::string(e.what()).find("process 1 (pid "), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("exit code 4"), std::string::npos) << e.what();
  }
}

TEST(Spawn, JoinFalseReturnsAtOnceAndJoinTimesOut) {
  SpawnContext ctx = spawn(
      sleep_long, SpawnOptions{.nprocs = 2, .join = false, .grace_period = std::chrono::milliseconds(100)});
  EXPECT_EQ(ctx.pids().size(), 2u);
  EXPECT_FALSE(ctx.join(std::chrono::milliseconds(50)));
  EXPECT_THROW(ctx.result<int>(0), StateError);
  const auto pids = ctx.pids();
  { SpawnContext gone = std::move(ctx); }  // the destructor stops and reaps them
  for (pid_t pid : pids) EXPECT_NE(::kill(pid, 0), 0) << "child " << pid << " still exists";
  EXPECT_THROW(spawn(sleep_long, SpawnOptions{.nprocs = 1, .timeout = std::chrono::milliseconds(100)}),
               TimeoutError);
}

TEST(Spawn, BadOptionsAreRejected) {
  EXPECT_THROW(spawn(sleep_long, SpawnOptions{.nprocs = 3, .devices = "0,1"}), ValueError);
  EXPECT_THROW(spawn(sleep_long, SpawnOptions{.devices = "0,9999"}), ValueError);
  EXPECT_THROW(spawn(sleep_long, SpawnOptions{.devices = "a"}), ValueError);
}

}  // namespace
}  // namespace crew::dist
