// A worker's output reaches workerlog.N as it is printed, and a crash's last lines reach the log
// and the launcher's failure block: crew programs line-buffer stdout under the launcher and
// flush it on a fatal signal (crew/core/worker_stdio.h). The worker is this test binary, re-run
// by the launcher with CREW_TEST_CHILD_MODE set, so its printf goes through C stdio to a pipe.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "tests/launch/launch_test_util.h"

namespace crew::launch::testing {
namespace {

using std::chrono::seconds;

constexpr const char* kModeVar = "CREW_TEST_CHILD_MODE";
constexpr const char* kChildTest = "LaunchOutputChild.Run";

std::string self_exe() {
  char buf[4096];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

std::vector<std::string> child_command() { return {self_exe(), std::string("--gtest_filter=") + kChildTest}; }

// The worker's half: skipped in a normal test run, a worker under the launcher otherwise.
TEST(LaunchOutputChild, Run) {
  const char* mode = std::getenv(kModeVar);
  if (!mode) GTEST_SKIP() << "runs only as a launched worker (" << kModeVar << " set)";
  for (int i = 1; i <= 4; ++i) std::printf("child-line-%d\n", i);
  if (std::string(mode) == "crash") ::raise(SIGSEGV);
  ::sleep(60);  // "sleep": the test stops the job long before
}

TEST(LaunchOutput, CrashLeavesItsLastLinesInTheLogAndTheFailureBlock) {
  TempDir dir;
  const std::string log = dir.file("log");
  std::vector<std::string> args = {"launch", "--devices=0", "--log_dir", log};
  for (const auto& a : child_command()) args.push_back(a);
  CrewRun r = run_crew(dir, args, {std::string(kModeVar) + "=crash"});
  EXPECT_EQ(r.code, 128 + SIGSEGV) << r.output;
  const std::string worker_log = read_file(log + "/workerlog.0");
  EXPECT_TRUE(has(worker_log, "child-line-1\nchild-line-2\nchild-line-3\nchild-line-4\n")) << worker_log;
  const size_t detail = r.stderr_text.find("ERROR LOG DETAIL -----");
  ASSERT_NE(detail, std::string::npos) << r.stderr_text;
  EXPECT_NE(r.stderr_text.find("child-line-4\n", detail), std::string::npos) << r.stderr_text;
  EXPECT_TRUE(has(r.stdout_text, "child-line-4")) << "console: " << r.stdout_text;
}

TEST(LaunchOutput, LineReachesTheLogWhileTheWorkerStillRuns) {
  TempDir dir;
  const std::string log = dir.file("log");
  std::vector<std::string> args = {"launch", "--devices=0", "--grace_period", "200ms", "--log_dir", log};
  for (const auto& a : child_command()) args.push_back(a);
  CrewProcess p(dir, args, {std::string(kModeVar) + "=sleep"});
  EXPECT_TRUE(wait_for_text(log + "/workerlog.0", "child-line-4\n", seconds(30)))
      << "workerlog.0: " << read_file(log + "/workerlog.0");
  p.signal(SIGTERM);
  CrewRun r = p.wait(seconds(20));
  EXPECT_EQ(r.code, 128 + SIGTERM) << r.output;
}

}  // namespace
}  // namespace crew::launch::testing
