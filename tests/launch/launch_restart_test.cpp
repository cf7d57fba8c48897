// --max_restart's restarts: a pause between them (--restart_backoff), a separator line per
// generation in each workerlog (appended, even with --log_overwrite), and one closing line
// saying how many restarts happened and why the job gave up.
#include <gtest/gtest.h>
#include <signal.h>

#include "crew/core/error.h"
#include "crew/launch/options.h"
#include "tests/launch/launch_test_util.h"

namespace crew::launch::testing {
namespace {

using std::chrono::seconds;

TEST(LaunchRestart, GenerationsAreSeparatedInTheLogsAndTheEndIsSummarised) {
  TempDir dir;
  const std::string log = dir.file("log");
  CrewRun r = run_crew(dir, {"launch", "--devices=0,1", "--max_restart", "2", "--restart_backoff", "0",
                             "--log_overwrite", "--log_dir", log, "/bin/sh", "-c",
                             "echo attempt=$CREW_RESTART_COUNT; [ $CREW_RANK = 0 ] || exit 1"});
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_EQ(count(r.stderr_text, "Restarting the job"), 2) << r.stderr_text;
  EXPECT_TRUE(has(r.stderr_text, "restart 1 of 2, CREW_RESTART_COUNT=1) in 0 ms")) << r.stderr_text;
  EXPECT_EQ(count(r.stderr_text, "job failed after 2 restarts: rank 1 (local rank 1) failed: exit code 1"), 1)
      << r.stderr_text;
  EXPECT_TRUE(has(r.stderr_text, "restart_backoff: 0ms")) << r.stderr_text;
  const std::string w1 = read_file(log + "/workerlog.1");
  EXPECT_TRUE(has(w1,
                  "attempt=0\n==== restart 1 of 2 (generation 1) ====\nattempt=1\n"
                  "==== restart 2 of 2 (generation 2) ====\nattempt=2\n"))
      << w1;
  // The failure block shows this generation's lines, not the separator.
  EXPECT_TRUE(has(r.stderr_text, "ERROR LOG DETAIL -------------------------\nattempt=2\n")) << r.stderr_text;
}

TEST(LaunchRestart, CompletionAfterRestartsIsSummarised) {
  TempDir dir;
  CrewRun r =
      run_crew(dir, {"launch", "--devices=0", "--max_restart", "3", "--restart_backoff", "0", "--log_dir",
                     dir.file("log"), "/bin/sh", "-c", "[ $CREW_RESTART_COUNT -ge 1 ] || exit 2"});
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(has(r.stderr_text, "job completed after 1 restart\n")) << r.stderr_text;
}

TEST(LaunchRestart, SignalDuringTheBackoffEndsTheJob) {
  TempDir dir;
  const std::string job = "backoff_" + std::to_string(::getpid());
  CrewProcess p(dir, {"launch", "--devices=0", "--max_restart", "1", "--restart_backoff", "10m", "--job_id",
                      job, "--log_dir", dir.file("log"), "/bin/sh", "-c", "exit 3"});
  ASSERT_TRUE(wait_for_text(p.stderr_path(), "Restarting the job", seconds(30)));
  p.signal(SIGTERM);
  CrewRun r = p.wait(seconds(20));
  EXPECT_EQ(r.code, 128 + SIGTERM) << r.output;
  EXPECT_TRUE(has(r.stderr_text, "while waiting to restart")) << r.stderr_text;
  EXPECT_EQ(count(r.stderr_text, "Run Pod:"), 1)
      << "a generation started after the signal: " << r.stderr_text;
}

TEST(LaunchRestart, BackoffOptionAndItsEnvironmentForm) {
  LaunchOptions o;
  ::setenv("CREW_LAUNCH_RESTART_BACKOFF", "250ms", 1);
  apply_environment(&o, {});
  ::unsetenv("CREW_LAUNCH_RESTART_BACKOFF");
  EXPECT_EQ(o.restart_backoff.count(), 250);
  EXPECT_EQ(LaunchOptions{}.restart_backoff.count(), 1000);
  o.program = "x";
  o.restart_backoff = std::chrono::milliseconds(-1);
  EXPECT_THROW(validate(o), ValueError);
}

}  // namespace
}  // namespace crew::launch::testing
