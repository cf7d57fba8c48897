// Node 0 binding its store on --master's host: an address this host does not have
// (EADDRNOTAVAIL) is named as such, not as a busy port. 192.0.2.0/24 is TEST-NET-1 (RFC 5737):
// binding it fails locally and sends nothing; no other node is started, nothing is contacted.
#include <gtest/gtest.h>

#include "tests/launch/launch_test_util.h"

namespace crew::launch::testing {
namespace {

TEST(LaunchBind, AMasterAddressNotOfThisHostIsNamedAsSuch) {
  if (read_file("/proc/sys/net/ipv4/ip_nonlocal_bind").rfind("1", 0) == 0) {
    GTEST_SKIP() << "net.ipv4.ip_nonlocal_bind=1: binding a foreign address succeeds here";
  }
  TempDir dir;
  const std::string master = "192.0.2.1:" + std::to_string(free_port());
  CrewRun r = run_crew(dir, {"launch",
                             "--nnodes",
                             "2",
                             "--rank",
                             "0",
                             "--master",
                             master,
                             "--host",
                             "192.0.2.2",
                             "--token",
                             "t",
                             "--rendezvous_timeout",
                             "10s",
                             "--nproc_per_node",
                             "1",
                             "--log_dir",
                             dir.file("log"),
                             "/bin/sh",
                             "-c",
                             "echo started-$CREW_RANK"});
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_TRUE(has(r.stderr_text, "cannot listen on " + master)) << r.stderr_text;
  EXPECT_TRUE(has(r.stderr_text, "192.0.2.1 is not an address of this host")) << r.stderr_text;
  EXPECT_FALSE(has(r.stderr_text, "another job")) << r.stderr_text;
  EXPECT_FALSE(has(r.output, "started-0")) << r.output;
}

}  // namespace
}  // namespace crew::launch::testing
