#pragma once
// Runs a function in N real processes (fork), for distributed tests.
//
//   auto results = crew::testing::run_ranks(3, [&](int rank, int world) {
//     ... // throw to fail (tests/testing/child_expect.h); runs in a child process
//   }, {.timeout = std::chrono::seconds(30), .env = {{"CREW_TIMEOUT", "5s"}}});
//   crew::testing::expect_all_ok(results);
//
// Each child runs fn inside try/catch, reports an exception's text through a pipe and exits
// with 0 (ok) or 1. The parent waits with a deadline and SIGKILLs every child still running
// then (with its process group: each child leads its own), so a hang becomes a test failure;
// children also die with the test binary (PR_SET_PDEATHSIG). Call it from a single-threaded test process: GNU
// OpenMP (used by oneDNN) is not fork-safe, so do not run OpenMP kernels in the parent before
// forking children that use them (do such work inside the children).
#include <chrono>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace crew::testing {

struct RunRanksOptions {
  std::chrono::milliseconds timeout{std::chrono::seconds(60)};
  std::vector<std::pair<std::string, std::string>> env;  // set in every child
  bool set_rank_env = false;  // also set CREW_RANK / CREW_WORLD_SIZE / CREW_LOCAL_RANK per child
};

struct RankResult {
  int rank = 0;
  int exit_code = -1;  // -1 when killed by a signal
  int signal = 0;      // the signal that ended it, 0 if none
  bool timed_out = false;
  std::string error;  // the exception text the child reported
  bool ok() const { return exit_code == 0 && !timed_out; }
};

std::vector<RankResult> run_ranks(int world, const std::function<void(int rank, int world)>& fn,
                                  const RunRanksOptions& options = {});
// A gtest failure for each rank that did not succeed, naming it and its error.
void expect_all_ok(const std::vector<RankResult>& results);
std::string describe(const RankResult& r);

}  // namespace crew::testing
