// `crew launch` when things go wrong: a failing worker, a signal death, the launcher signalled
// or killed, restarts. Every test checks that no process of the job is left (from /proc).
#include <gtest/gtest.h>

#include <signal.h>

#include "tests/launch/launch_test_util.h"

namespace crew::launch::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

std::string unique_job(const char* name) { return std::string(name) + "_" + std::to_string(::getpid()); }

TEST(LaunchFault, FailingWorkerStopsTheOthersAndGivesItsExitCode) {
  TempDir dir;
  const std::string job = unique_job("fail");
  CrewRun r = run_crew(dir, {"launch", "--devices=0,1,2", "--job_id", job, "--log_dir", dir.file("log"), "/bin/sh",
                             "-c", "if [ $CREW_RANK = 1 ]; then echo boom-line; exit 3; fi; sleep 30"});
  EXPECT_EQ(r.code, 3) << r.output;
  EXPECT_NE(r.stderr_text.find("Container rank 1 (local rank 1, pid "), std::string::npos) << r.stderr_text;
  EXPECT_NE(r.stderr_text.find("failed: exit code 3"), std::string::npos);
  EXPECT_NE(r.stderr_text.find("------------------------- ERROR LOG DETAIL -------------------------\nboom-line\n"),
            std::string::npos)
      << r.stderr_text;
  EXPECT_NE(r.stderr_text.find("Exit code 3"), std::string::npos);
  EXPECT_TRUE(wait_job_gone(job, seconds(5)).empty());
}

TEST(LaunchFault, WorkerKilledBySignalGives128PlusSignal) {
  TempDir dir;
  const std::string job = unique_job("sigkill");
  CrewRun r = run_crew(dir, {"launch", "--devices=0,1", "--job_id", job, "--log_dir", dir.file("log"), "/bin/sh",
                             "-c", "if [ $CREW_RANK = 0 ]; then kill -9 $$; fi; sleep 30"});
  EXPECT_EQ(r.code, 128 + SIGKILL) << r.output;
  EXPECT_NE(r.stderr_text.find("Container rank 0"), std::string::npos);
  EXPECT_NE(r.stderr_text.find("signal SIGKILL (9)"), std::string::npos) << r.stderr_text;
  EXPECT_TRUE(wait_job_gone(job, seconds(5)).empty());
}

TEST(LaunchFault, LauncherKilledWithSigkillTakesItsWorkersAlong) {
  TempDir dir;
  const std::string job = unique_job("killed");
  const std::string log = dir.file("log");
  // Each worker also starts a grandchild, which must die too (process group + PDEATHSIG).
  CrewProcess p(dir, {"launch", "--devices=0,1,2", "--job_id", job, "--log_dir", log, "/bin/sh", "-c",
                      "sleep 60 & echo started; wait"});
  // Every worker prints after it started its grandchild; all three must have done so.
  for (int rank = 0; rank < 3; ++rank)
    ASSERT_TRUE(wait_for_text(log + "/workerlog." + std::to_string(rank), "started", seconds(20))) << rank;
  // A process in the middle of an exec may show no environment for a moment: look again.
  size_t seen = 0;
  for (int attempt = 0; attempt < 100 && seen < 6u; ++attempt) {
    if (attempt > 0) std::this_thread::sleep_for(milliseconds(20));
    seen = processes_of_job(job).size();
  }
  EXPECT_GE(seen, 6u);
  p.signal(SIGKILL);
  p.wait(seconds(10));
  // Workers die with the launcher (PR_SET_PDEATHSIG); their own children go with the group
  // only if someone signals it, so check what is left after a short while.
  auto left = wait_job_gone(job, seconds(5));
  EXPECT_TRUE(left.empty()) << left.size() << " processes of the job survived the launcher";
  for (pid_t pid : left) ::kill(pid, SIGKILL);
}

TEST(LaunchFault, SigtermToTheLauncherStopsWorkersEvenOnesIgnoringIt) {
  TempDir dir;
  const std::string job = unique_job("sigterm");
  const std::string log = dir.file("log");
  CrewProcess p(dir, {"launch", "--devices=0,1", "--grace_period", "300ms", "--job_id", job, "--log_dir", log,
                      "/bin/sh", "-c",
                      "if [ $CREW_RANK = 1 ]; then trap '' TERM; fi; echo started; while true; do sleep 0.05; done"});
  ASSERT_TRUE(wait_for_text(log + "/workerlog.1", "started", seconds(20)));
  ASSERT_TRUE(wait_for_text(log + "/workerlog.0", "started", seconds(20)));
  p.signal(SIGTERM);
  CrewRun r = p.wait(seconds(20));
  EXPECT_EQ(r.code, 128 + SIGTERM) << r.output;
  EXPECT_NE(r.stderr_text.find("Terminating with signal 15"), std::string::npos) << r.stderr_text;
  EXPECT_TRUE(wait_job_gone(job, seconds(5)).empty());
}

TEST(LaunchFault, SigintIsForwardedToTheWorkers) {
  TempDir dir;
  const std::string log = dir.file("log");
  CrewProcess p(dir, {"launch", "--devices=0,1", "--log_dir", log, "/bin/sh", "-c",
                      "trap 'echo got-INT; exit 0' INT; echo started; while true; do sleep 0.05; done"});
  ASSERT_TRUE(wait_for_text(log + "/workerlog.0", "started", seconds(20)));
  ASSERT_TRUE(wait_for_text(log + "/workerlog.1", "started", seconds(20)));
  p.signal(SIGINT);
  CrewRun r = p.wait(seconds(20));
  EXPECT_EQ(r.code, 128 + SIGINT) << r.output;
  EXPECT_TRUE(wait_for_text(log + "/workerlog.1", "got-INT", seconds(5)));
}

TEST(LaunchFault, RestartsAreCountedForTheWholeJob) {
  TempDir dir;
  const std::string log = dir.file("log");
  CrewRun r = run_crew(dir, {"launch", "--devices=0,1", "--max_restart", "2", "--log_dir", log, "/bin/sh", "-c",
                             "echo attempt=$CREW_RESTART_COUNT; [ $CREW_RESTART_COUNT -ge 2 ] || [ $CREW_RANK = 1 ] || exit 5"});
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(count(r.stderr_text, "Restarting the job"), 2) << r.stderr_text;
  EXPECT_NE(r.stderr_text.find("restart 2 of 2, CREW_RESTART_COUNT=2"), std::string::npos);
  const std::string w1 = read_file(log + "/workerlog.0");  // rank 0 prints before it fails
  EXPECT_NE(w1.find("attempt=0\n==== restart 1 of 2 (generation 1) ====\nattempt=1\n"
                    "==== restart 2 of 2 (generation 2) ====\nattempt=2\n"),
            std::string::npos)
      << w1;

  CrewRun out = run_crew(dir, {"launch", "--devices=0,1", "--max_restart", "1", "--log_dir", dir.file("log2"),
                               "/bin/sh", "-c",
                               // Only rank 0 fails, so it always prints before the job stops.
                               "echo attempt=$CREW_RESTART_COUNT; [ $CREW_RANK = 1 ] && exec sleep 30; exit 5"});
  EXPECT_EQ(out.code, 5) << out.output;
  EXPECT_EQ(count(out.stderr_text, "Restarting the job"), 1);
  EXPECT_EQ(count(out.stdout_text, "attempt="), 2) << out.stdout_text;
}

}  // namespace
}  // namespace crew::launch::testing
