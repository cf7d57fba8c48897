// `crew launch`'s command line as a user types it: launcher options after the program are
// caught with the corrected command, `--` passes them on, an empty value is an error naming
// the option, torchrun's spellings work, usage errors exit with 2, --help shows defaults.
#include <gtest/gtest.h>

#include "tests/launch/launch_test_util.h"

namespace crew::launch::testing {
namespace {

const char* kFixHint = "launcher options must come before the program: crew launch ";

TEST(LaunchCommandLine, LauncherFlagsAfterTheProgramShowTheCorrectedCommand) {
  TempDir dir;
  CrewRun r = run_crew(dir, {"launch", "/bin/echo", "--devices=0,1", "--log_dir", dir.file("log")});
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_TRUE(has(r.stderr_text,
                  std::string(kFixHint) + "--devices=0,1 --log_dir " + dir.file("log") + " /bin/echo\n"))
      << r.stderr_text;

  // A value in the next argument moves with its flag; the program's own arguments stay.
  CrewRun spaced = run_crew(
      dir, {"launch", "--log_dir", dir.file("L"), "/bin/echo", "--epochs", "2", "--nproc_per_node", "3"});
  EXPECT_EQ(spaced.code, 2) << spaced.output;
  EXPECT_TRUE(has(spaced.stderr_text, std::string(kFixHint) + "--log_dir " + dir.file("L") +
                                          " --nproc_per_node 3 /bin/echo --epochs 2"))
      << spaced.stderr_text;
  EXPECT_TRUE(has(spaced.stderr_text, "put '--' before the program")) << spaced.stderr_text;
  EXPECT_FALSE(has(spaced.output, "argument was not expected")) << spaced.output;
}

TEST(LaunchCommandLine, ADoubleDashPassesLauncherFlagsToTheProgram) {
  TempDir dir;
  CrewRun r = run_crew(dir, {"launch", "--nproc_per_node", "1", "--log_dir", dir.file("log"), "--",
                             "/bin/echo", "--devices=0,1", "--max_restart", "2"});
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(has(r.stdout_text, "--devices=0,1 --max_restart 2\n")) << r.stdout_text;
  // Flags that programs commonly share (--rank, --host, --log_level) pass without a '--'.
  CrewRun shared = run_crew(dir, {"launch", "--nproc_per_node", "1", "--log_dir", dir.file("log"),
                                  "/bin/echo", "--rank", "3", "--log_level", "debug"});
  ASSERT_EQ(shared.code, 0) << shared.output;
  EXPECT_TRUE(has(shared.stdout_text, "--rank 3 --log_level debug\n")) << shared.stdout_text;
}

TEST(LaunchCommandLine, AnEmptyValueNamesTheOptionAndDoesNotSwallowTheProgram) {
  TempDir dir;
  CrewRun r = run_crew(dir, {"launch", "--devices=", "/bin/echo", "hi"});
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_TRUE(has(r.stderr_text, "--devices has an empty value")) << r.stderr_text;
  EXPECT_FALSE(has(r.stderr_text, "/bin/echo")) << r.stderr_text;
  CrewRun quoted = run_crew(dir, {"launch", "--devices", "", "/bin/echo", "hi"});
  EXPECT_EQ(quoted.code, 2) << quoted.output;
  EXPECT_TRUE(has(quoted.stderr_text, "--devices has an empty value")) << quoted.stderr_text;
}

TEST(LaunchCommandLine, TorchrunSpellingsAreAccepted) {
  TempDir dir;
  const int port = free_port();
  CrewRun r = run_crew(dir, {"launch", "--nproc-per-node", "2", "--max-restarts", "0", "--node-rank", "0",
                             "--master-addr", "127.0.0.1", "--master-port", std::to_string(port), "--log_dir",
                             dir.file("log"), "/bin/sh", "-c", "echo w=$CREW_WORLD_SIZE m=$CREW_MASTER"});
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(has(r.stdout_text, "w=2 m=127.0.0.1:" + std::to_string(port))) << r.stdout_text;
  CrewRun near = run_crew(dir, {"launch", "--log-dir", "x", "/bin/true"});
  EXPECT_EQ(near.code, 2) << near.output;
  EXPECT_TRUE(has(near.stderr_text, "unknown option '--log-dir'; did you mean --log_dir?"))
      << near.stderr_text;
}

TEST(LaunchCommandLine, UsageErrorsExitWithTwoAndSayLaunchOnce) {
  TempDir dir;
  const std::vector<std::vector<std::string>> bad = {
      {"launch", "--nnodes", "x", "/bin/true"},  // CLI11's conversion error (its own code is 105)
      {"launch", "--nnodes", "0", "/bin/true"},  // validate()
      {"launch", "--no_such_flag", "/bin/true"},
      {"launch", "--cpu_affinity", "maybe", "/bin/true"},
      {"launch"},
  };
  for (const auto& args : bad) {
    CrewRun r = run_crew(dir, args);
    EXPECT_EQ(r.code, 2) << r.output;
    EXPECT_TRUE(has(r.stderr_text, "crew launch: ")) << r.stderr_text;
    EXPECT_FALSE(has(r.stderr_text, "launch: launch")) << r.stderr_text;
  }
}

TEST(LaunchCommandLine, HelpShowsDefaults) {
  TempDir dir;
  CrewRun r = run_crew(dir, {"launch", "--help"});
  EXPECT_EQ(r.code, 0) << r.output;
  for (const char* text : {"PROGRAM [ARGS...]", "--max_restart", "INT:NONNEGATIVE=0", "--log_dir TEXT=log", "TEXT=5s"}) {
    EXPECT_TRUE(has(r.stdout_text, text)) << text << "\n" << r.stdout_text;
  }
}

}  // namespace
}  // namespace crew::launch::testing
