// Two launchers on loopback form one job: node-major ranks, one world size, one store.
#include <gtest/gtest.h>

#include "tests/launch/launch_test_util.h"

namespace crew::launch::testing {
namespace {

using std::chrono::seconds;

const char* kToken = "launch-nodes-test-token";  // a multi-node job's store requires one

const char* kWorker = "echo \"g=$CREW_RANK w=$CREW_WORLD_SIZE l=$CREW_LOCAL_RANK n=$CREW_NODE_RANK/$CREW_NNODES m=$CREW_MASTER\"";

TEST(LaunchNodes, TwoNodesAgreeOnTheWorld) {
  TempDir dir;
  const std::string master = "127.0.0.1:" + std::to_string(free_port());
  // Node 1 first: it must wait for node 0's store.
  CrewProcess node1(dir, {"launch", "--token", kToken, "--nnodes", "2", "--rank", "1", "--master", master,
                          "--nproc_per_node", "1", "--log_dir", dir.file("log1"), "/bin/sh", "-c", kWorker});
  CrewProcess node0(dir, {"launch", "--token", kToken, "--nnodes", "2", "--rank", "0", "--master", master,
                          "--nproc_per_node", "2", "--log_dir", dir.file("log0"), "/bin/sh", "-c", kWorker});
  CrewRun r0 = node0.wait(seconds(60));
  CrewRun r1 = node1.wait(seconds(60));
  ASSERT_EQ(r0.code, 0) << r0.output;
  ASSERT_EQ(r1.code, 0) << r1.output;
  const std::string m = "m=" + master;
  EXPECT_NE(read_file(dir.file("log0/workerlog.0")).find("g=0 w=3 l=0 n=0/2 " + m), std::string::npos);
  EXPECT_NE(read_file(dir.file("log0/workerlog.1")).find("g=1 w=3 l=1 n=0/2 " + m), std::string::npos);
  EXPECT_NE(read_file(dir.file("log1/workerlog.0")).find("g=2 w=3 l=0 n=1/2 " + m), std::string::npos)
      << read_file(dir.file("log1/workerlog.0"));
}

TEST(LaunchNodes, AFailureOnOneNodeStopsTheOther) {
  TempDir dir;
  const std::string master = "127.0.0.1:" + std::to_string(free_port());
  CrewProcess node0(dir,
                    {"launch", "--token", kToken, "--nnodes", "2", "--rank", "0", "--master", master,
                     "--nproc_per_node", "1", "--log_dir", dir.file("log0"), "/bin/sh", "-c", "sleep 60"});
  CrewProcess node1(dir, {"launch", "--token", kToken, "--nnodes", "2", "--rank", "1", "--master", master,
                          "--nproc_per_node", "1", "--log_dir", dir.file("log1"), "/bin/sh", "-c", "exit 7"});
  CrewRun r1 = node1.wait(seconds(60));
  CrewRun r0 = node0.wait(seconds(60));
  EXPECT_EQ(r1.code, 7) << r1.output;
  EXPECT_EQ(r0.code, 7) << r0.output;
  EXPECT_NE(r0.stderr_text.find("failed on another node"), std::string::npos) << r0.stderr_text;
}

TEST(LaunchNodes, BothNodesRestartTogether) {
  TempDir dir;
  const std::string master = "127.0.0.1:" + std::to_string(free_port());
  // Node 1 fails in the first generation; node 0's worker would sleep forever there.
  CrewProcess node0(
      dir, {"launch", "--token", kToken, "--nnodes", "2", "--rank", "0", "--master", master,
            "--nproc_per_node", "1", "--max_restart", "1", "--log_dir", dir.file("log0"), "/bin/sh", "-c",
            "echo gen=$CREW_RESTART_COUNT world=$CREW_WORLD_SIZE; [ $CREW_RESTART_COUNT = 1 ] || sleep 60"});
  CrewProcess node1(
      dir, {"launch", "--token", kToken, "--nnodes", "2", "--rank", "1", "--master", master,
            "--nproc_per_node", "1", "--max_restart", "1", "--log_dir", dir.file("log1"), "/bin/sh", "-c",
            "echo gen=$CREW_RESTART_COUNT; [ $CREW_RESTART_COUNT = 1 ] || exit 9"});
  CrewRun r1 = node1.wait(seconds(60));
  CrewRun r0 = node0.wait(seconds(60));
  EXPECT_EQ(r0.code, 0) << r0.output;
  EXPECT_EQ(r1.code, 0) << r1.output;
  EXPECT_EQ(count(r0.stderr_text, "Restarting the job"), 1) << r0.stderr_text;
  EXPECT_NE(read_file(dir.file("log0/workerlog.0"))
                .find("gen=0 world=2\n==== restart 1 of 1 (generation 1) ====\ngen=1 world=2\n"),
            std::string::npos);
}

}  // namespace
}  // namespace crew::launch::testing
