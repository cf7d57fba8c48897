// WorkerOutput with a pseudo-terminal: the worker sees a terminal (so C stdio line-buffers and
// progress bars redraw), the log gets plain lines, and the end of output is seen.
#include "crew/launch/worker_output.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <string>
#include <vector>

#include "crew/core/spawn_process.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/text.h"

namespace crew::launch {
namespace {

using crew::testing::read_file;
using crew::testing::TempDir;

// Runs `sh -c script` with its output in a WorkerOutput and returns the log's text.
std::string run_shell(const TempDir& dir, const std::string& script, bool tty, bool* was_tty = nullptr) {
  const std::string log = dir.file("workerlog.0");
  WorkerOutput out(log, {.overwrite = true, .tty = tty});
  if (was_tty) *was_tty = out.is_tty();
  dist::ChildOptions co;
  co.argv = {"/bin/sh", "-c", script};
  co.env = {"PATH=/usr/bin:/bin"};
  co.stdout_fd = co.stderr_fd = out.write_fd();
  dist::ChildProcess child = dist::ChildProcess::start(co);
  out.close_write_end();
  out.finish(20000);
  EXPECT_TRUE(out.at_eof());
  child.wait_for(std::chrono::seconds(20));
  return read_file(log);
}

// A worker log left 0644 by an older launcher stayed 0644 (only the envlog was re-chmodded):
// opening it, to append or to overwrite, makes it 0600.
TEST(WorkerOutput, AnExistingWorldReadableLogBecomesPrivate) {
  TempDir dir;
  const std::string log = dir.file("workerlog.0");
  for (bool overwrite : {false, true}) {
    { std::ofstream(log) << "old\n"; }
    ASSERT_EQ(::chmod(log.c_str(), 0644), 0);
    WorkerOutput out(log, {.overwrite = overwrite, .tty = false});
    struct stat st {};
    ASSERT_EQ(::stat(log.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u) << "overwrite=" << overwrite;
  }
}

TEST(WorkerOutput, TtyWorkerSeesATerminalOnStdoutAndStderr) {
  TempDir dir;
  bool was_tty = false;
  std::string log = run_shell(dir, "test -t 1 && echo out-tty; test -t 2 && echo err-tty >&2; echo done", true,
                              &was_tty);
  ASSERT_TRUE(was_tty) << "no pseudo-terminal on this system";
  EXPECT_EQ(log, "out-tty\nerr-tty\ndone\n");  // no "\r\n": output processing is off
}

TEST(WorkerOutput, PipeWorkerSeesNoTerminal) {
  TempDir dir;
  EXPECT_EQ(run_shell(dir, "test -t 1 || echo out-pipe", false), "out-pipe\n");
}

TEST(WorkerOutput, RedrawsReachTheLogAsPlainLines) {
  TempDir dir;
  std::string log = run_shell(dir, "printf 'step 1\\rstep 2\\rstep 3\\n'; printf 'tail'", true);
  // The first redraw is written (none before it), the rest arrive within 5 s: the final state.
  EXPECT_EQ(log, "step 1\nstep 3\ntail\n");
}

TEST(WorkerOutput, ALotOfOutputArrivesWholeThroughThePty) {
  TempDir dir;
  std::string log = run_shell(dir, "i=0; while [ $i -lt 3000 ]; do echo line-$i; i=$((i+1)); done", true);
  EXPECT_EQ(std::count(log.begin(), log.end(), '\n'), 3000);
  EXPECT_NE(log.find("line-2999\n"), std::string::npos);
}

}  // namespace
}  // namespace crew::launch
