// The job token stays secret: envlog.N masks it, the launcher's log files are 0600, and the
// token can come from a file (--token-file, refused when missing, empty or readable by
// others) or the environment instead of the command line, where `ps` shows it.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "tests/launch/launch_test_util.h"

namespace crew::launch::testing {
namespace {

using std::chrono::seconds;

const char* kSecret = "0123456789abcdef0123456789abcdef";  // 32 chars, as a generated token

unsigned file_mode(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st.st_mode & 0777;
}

std::string write_token_file(const TempDir& dir, const std::string& name, const std::string& text,
                             unsigned mode) {
  const std::string path = dir.file(name);
  std::ofstream(path) << text;
  ::chmod(path.c_str(), mode);
  return path;
}

TEST(LaunchSecrets, EnvlogMasksTheTokenAndLogsArePrivate) {
  TempDir dir;
  CrewRun r = run_crew(dir,
                       {"launch", "--nproc_per_node", "1", "--log_dir", dir.file("log"), "/bin/sh", "-c",
                        "echo token=$CREW_JOB_TOKEN > " + dir.file("seen")},
                       {std::string("CREW_JOB_TOKEN=") + kSecret});
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(has(read_file(dir.file("seen")), std::string("token=") + kSecret))
      << "the worker still gets it";
  const std::string envlog = read_file(dir.file("log/envlog.0"));
  EXPECT_FALSE(has(envlog, kSecret)) << envlog;
  EXPECT_TRUE(has(envlog, "CREW_JOB_TOKEN=<set, 32 chars>")) << envlog;
  EXPECT_FALSE(has(r.output, kSecret)) << r.output;
  EXPECT_EQ(file_mode(dir.file("log/envlog.0")), 0600u);
  EXPECT_EQ(file_mode(dir.file("log/workerlog.0")), 0600u);
}

// The log directory the launcher creates is 0700 (parents it creates too); an existing
// world-readable workerlog.N is made 0600 as envlog.N is.
TEST(LaunchSecrets, LogDirectoryIsPrivateAndOldLogsAreMadePrivate) {
  TempDir dir;
  const std::string fresh = dir.file("runs/log");
  CrewRun r = run_crew(dir, {"launch", "--nproc_per_node", "1", "--log_dir", fresh, "/bin/true"});
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(file_mode(dir.file("runs")), 0700u);
  EXPECT_EQ(file_mode(fresh), 0700u);
  EXPECT_EQ(file_mode(fresh + "/workerlog.0"), 0600u);
  ASSERT_EQ(::chmod((fresh + "/workerlog.0").c_str(), 0644), 0);
  ASSERT_EQ(::chmod((fresh + "/envlog.0").c_str(), 0644), 0);
  r = run_crew(dir, {"launch", "--nproc_per_node", "1", "--log_dir", fresh, "/bin/true"});
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(file_mode(fresh + "/workerlog.0"), 0600u);
  EXPECT_EQ(file_mode(fresh + "/envlog.0"), 0600u);
}

TEST(LaunchSecrets, TokenFileServesTwoNodes) {
  TempDir dir;
  const std::string token_file = write_token_file(dir, "token", std::string(kSecret) + "\n", 0600);
  const std::string master = "127.0.0.1:" + std::to_string(free_port());
  auto node = [&](int rank) {
    return std::vector<std::string>{"launch",
                                    "--token-file",
                                    token_file,
                                    "--nnodes",
                                    "2",
                                    "--rank",
                                    std::to_string(rank),
                                    "--master",
                                    master,
                                    "--nproc_per_node",
                                    "1",
                                    "--log_dir",
                                    dir.file("log" + std::to_string(rank)),
                                    "/bin/sh",
                                    "-c",
                                    "echo token=$CREW_JOB_TOKEN"};
  };
  CrewProcess node1(dir, node(1));
  CrewProcess node0(dir, node(0));
  CrewRun r0 = node0.wait(seconds(60));
  CrewRun r1 = node1.wait(seconds(60));
  ASSERT_EQ(r0.code, 0) << r0.output;
  ASSERT_EQ(r1.code, 0) << r1.output;
  EXPECT_FALSE(has(r0.output, "Job token:")) << "node 0 was given a token and generates none";
  for (const char* log : {"log0/workerlog.0", "log1/workerlog.0"}) {
    EXPECT_TRUE(has(read_file(dir.file(log)), std::string("token=") + kSecret)) << read_file(dir.file(log));
  }
  EXPECT_FALSE(has(r0.stderr_text + r1.stderr_text, kSecret)) << "the launchers never print it";
}

TEST(LaunchSecrets, ABadTokenFileIsAUsageErrorNamingFlagAndPath) {
  TempDir dir;
  const std::string empty = write_token_file(dir, "empty", "\n", 0600);
  const std::string open = write_token_file(dir, "open", kSecret, 0644);
  const std::string missing = dir.file("missing");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {missing, "cannot open"}, {empty, "the file is empty"}, {open, "mode 0644 lets group or others read"}};
  for (const auto& [path, why] : cases) {
    CrewRun r = run_crew(dir, {"launch", "--token-file", path, "--log_dir", dir.file("log"), "/bin/true"});
    EXPECT_EQ(r.code, 2) << r.output;
    EXPECT_TRUE(has(r.stderr_text, "--token-file '" + path + "'")) << r.stderr_text;
    EXPECT_TRUE(has(r.stderr_text, why)) << r.stderr_text;
  }
  const std::string good = write_token_file(dir, "good", kSecret, 0600);
  CrewRun both = run_crew(dir, {"launch", "--token", "x", "--token-file", good, "/bin/true"});
  EXPECT_EQ(both.code, 2) << both.output;
  EXPECT_TRUE(has(both.stderr_text, "--token and --token-file")) << both.stderr_text;
}

TEST(LaunchSecrets, TokenOnTheCommandLineWarnsThatPsShowsIt) {
  TempDir dir;
  CrewRun r = run_crew(dir, {"launch", "--nproc_per_node", "1", "--token", kSecret, "--log_dir",
                             dir.file("log"), "/bin/true"});
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(has(r.stderr_text, "prefer --token-file PATH or CREW_JOB_TOKEN")) << r.stderr_text;
}

}  // namespace
}  // namespace crew::launch::testing
