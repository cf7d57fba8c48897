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

// Launches `program` (one worker, logs in dir/log), expects `line` in workerlog.0 while the
// worker still runs, then stops the job with SIGTERM.
void expect_line_while_running(const std::vector<std::string>& program, const std::vector<std::string>& env,
                               const std::string& line) {
  TempDir dir;
  const std::string log = dir.file("log");
  std::vector<std::string> args = {"launch", "--devices=0", "--grace_period", "200ms", "--log_dir", log};
  args.insert(args.end(), program.begin(), program.end());
  CrewProcess p(dir, args, env);
  EXPECT_TRUE(wait_for_text(log + "/workerlog.0", line, seconds(30)))
      << "workerlog.0: " << read_file(log + "/workerlog.0");
  p.signal(SIGTERM);
  CrewRun r = p.wait(seconds(20));
  EXPECT_EQ(r.code, 128 + SIGTERM) << r.output;
}

TEST(LaunchOutput, LineReachesTheLogWhileTheWorkerStillRuns) {
  expect_line_while_running(child_command(), {std::string(kModeVar) + "=sleep"}, "child-line-4\n");
}

// A foreign program that block-buffers on a pipe (perl's print, like C stdio) shows its line
// while it runs: by default the worker's stdout is a pseudo-terminal, so it line-buffers.
TEST(LaunchOutput, ForeignProgramLineArrivesWhileItRuns) {
  expect_line_while_running({"perl", "-e", "print qq(foreign-line\\n); sleep 60"}, {}, "foreign-line\n");
}

TEST(LaunchOutput, WorkerStdioPipeGivesAPipeAndTtyATerminal) {
  TempDir dir;
  const std::string script = "if test -t 1; then echo stdout-is-tty; else echo stdout-is-pipe; fi";
  CrewRun tty = run_crew(dir, {"launch", "--devices=0", "--log_dir", dir.file("a"), "sh", "-c", script}, {});
  EXPECT_EQ(tty.code, 0) << tty.output;
  EXPECT_TRUE(has(read_file(dir.file("a") + "/workerlog.0"), "stdout-is-tty\n")) << tty.output;
  CrewRun pipe = run_crew(
      dir, {"launch", "--devices=0", "--worker_stdio", "pipe", "--log_dir", dir.file("b"), "sh", "-c", script}, {});
  EXPECT_EQ(pipe.code, 0) << pipe.output;
  EXPECT_TRUE(has(read_file(dir.file("b") + "/workerlog.0"), "stdout-is-pipe\n")) << pipe.output;
  CrewRun bad = run_crew(dir, {"launch", "--worker_stdio", "file", "sh", "-c", "true"}, {});
  EXPECT_EQ(bad.code, 2) << bad.output;
  EXPECT_TRUE(has(bad.stderr_text, "--worker_stdio='file': expected 'tty' or 'pipe'")) << bad.output;
}

// A progress bar redraws in place on the worker's terminal; the log and a console that is not
// a terminal (this test's file) get plain lines without a carriage return.
TEST(LaunchOutput, RedrawnProgressReachesLogAndFileConsoleAsPlainLines) {
  TempDir dir;
  const std::string log = dir.file("log");
  CrewRun r = run_crew(dir, {"launch", "--devices=0", "--log_dir", log, "sh", "-c",
                             "for i in 1 2 3 4 5; do printf '\\rprogress %s/5' $i; done; echo"},
                       {});
  EXPECT_EQ(r.code, 0) << r.output;
  const std::string worker_log = read_file(log + "/workerlog.0");
  EXPECT_EQ(worker_log.find('\r'), std::string::npos) << worker_log;
  EXPECT_TRUE(has(worker_log, "progress 5/5\n")) << worker_log;
  EXPECT_EQ(r.stdout_text.find('\r'), std::string::npos) << r.stdout_text;
  EXPECT_TRUE(has(r.stdout_text, "progress 5/5\n")) << r.stdout_text;
}

}  // namespace
}  // namespace crew::launch::testing
