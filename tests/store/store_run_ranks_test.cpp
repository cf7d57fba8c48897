// The multi-process harness the store and collective tests stand on (tests/testing/
// multiprocess.h): results per rank, environment, and the deadline that kills hung children
// together with what they started.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <thread>

#include "crew/core/timer.h"
#include "tests/testing/multiprocess.h"
#include "tests/testing/temp_dir.h"

namespace crew::testing {
namespace {

using namespace std::chrono_literals;

TEST(RunRanks, ReportsEachRanksOutcome) {
  auto results = run_ranks(4,
                           [](int rank, int world) {
                             if (world != 4) std::_Exit(9);
                             if (rank == 1) throw std::runtime_error("rank one failed on purpose");
                             if (rank == 2) std::_Exit(7);
                             if (rank == 3) ::raise(SIGABRT);
                           },
                           {.timeout = 30s});
  ASSERT_EQ(results.size(), 4u);
  EXPECT_TRUE(results[0].ok()) << describe(results[0]);
  EXPECT_EQ(results[1].exit_code, 1);
  EXPECT_NE(results[1].error.find("rank one failed on purpose"), std::string::npos) << describe(results[1]);
  EXPECT_NE(describe(results[1]).find("rank 1"), std::string::npos);
  EXPECT_EQ(results[2].exit_code, 7);
  EXPECT_FALSE(results[2].ok());
  EXPECT_EQ(results[3].signal, SIGABRT);
  EXPECT_FALSE(results[3].ok());
  for (auto& r : results) EXPECT_FALSE(r.timed_out);
}

TEST(RunRanks, SetsTheEnvironment) {
  auto results = run_ranks(2,
                           [](int rank, int world) {
                             const char* v = std::getenv("CREW_HARNESS_TEST");
                             if (!v || std::string(v) != "yes")
                               throw std::runtime_error("CREW_HARNESS_TEST not set");
                             const char* r = std::getenv("CREW_RANK");
                             const char* w = std::getenv("CREW_WORLD_SIZE");
                             if (!r || std::stoi(r) != rank || !w || std::stoi(w) != world)
                               throw std::runtime_error("rank env wrong");
                           },
                           {.timeout = 30s, .env = {{"CREW_HARNESS_TEST", "yes"}}, .set_rank_env = true});
  expect_all_ok(results);
}

bool process_gone(pid_t pid) {
  if (::kill(pid, 0) != 0) return true;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string pid_s, comm, state;
  stat >> pid_s >> comm >> state;
  return !stat || state == "Z";  // a zombie no one reaped yet is dead too
}

TEST(RunRanks, TheDeadlineKillsHungChildrenAndWhatTheyStarted) {
  TempDir dir;
  const std::string pid_file = dir.file("grandchild.pid");
  Stopwatch clock;
  auto results = run_ranks(2,
                           [&pid_file](int rank, int) {
                             if (rank == 0) return;
                             pid_t g = ::fork();  // holds the report pipe open and never exits by itself
                             if (g == 0) {
                               ::sleep(60);
                               ::_exit(0);
                             }
                             std::ofstream(pid_file) << g;
                             ::sleep(60);
                           },
                           {.timeout = 1s});
  EXPECT_LT(clock.seconds(), 30.0) << "run_ranks must return soon after its deadline";
  EXPECT_TRUE(results[0].ok()) << describe(results[0]);
  EXPECT_TRUE(results[1].timed_out) << describe(results[1]);
  EXPECT_NE(describe(results[1]).find("timed out"), std::string::npos);
  pid_t grandchild = 0;
  std::ifstream(pid_file) >> grandchild;
  ASSERT_GT(grandchild, 0);
  Deadline deadline(10s);
  while (!process_gone(grandchild) && !deadline.expired()) std::this_thread::sleep_for(10ms);
  EXPECT_TRUE(process_gone(grandchild)) << "grandchild " << grandchild << " survived the deadline";
  if (!process_gone(grandchild)) ::kill(grandchild, SIGKILL);
}

}  // namespace
}  // namespace crew::testing
