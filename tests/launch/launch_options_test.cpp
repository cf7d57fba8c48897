// Option parsing, device planning and bad command lines.
#include <gtest/gtest.h>

#include "crew/core/error.h"
#include "crew/launch/devices.h"
#include "crew/launch/options.h"
#include "crew/launch/worker_env.h"
#include "tests/launch/launch_test_util.h"

namespace crew::launch::testing {
namespace {

DeviceInventory cpu_inventory(int cores) {
  DeviceInventory inv;
  for (int i = 0; i < cores; ++i) inv.cpus.push_back(i);
  for (int i = 0; i < std::max(cores, DeviceInventory::kMinCpuSlots); ++i) inv.ids.push_back(i);
  inv.default_count = cores;
  inv.source = "test";
  return inv;
}

TEST(LaunchOptions, DeviceListParsing) {
  EXPECT_EQ(parse_id_list("0,1,2", "--devices"), (std::vector<int>{0, 1, 2}));
  EXPECT_THROW(parse_id_list("0,,1", "--devices"), ValueError);
  EXPECT_THROW(parse_id_list("0,x", "--devices"), ValueError);
  EXPECT_THROW(parse_id_list("1,1", "--devices"), ValueError);
  EXPECT_THROW(parse_id_list("-1", "--devices"), ValueError);
}

TEST(LaunchOptions, CpuWorkersSplitTheCores) {
  auto slots = plan_workers(cpu_inventory(8), "1,3", -1, true);
  ASSERT_EQ(slots.size(), 2u);
  EXPECT_EQ(slots[0].device_id, 1);
  EXPECT_EQ(slots[1].device_id, 3);
  EXPECT_EQ(slots[0].cpus, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(slots[1].cpus, (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(slots[1].num_threads, 4);
  // More workers than cores: round-robin, one thread each.
  auto many = plan_workers(cpu_inventory(2), "0,1,2", -1, true);
  EXPECT_EQ(many[2].cpus, (std::vector<int>{0}));
  EXPECT_EQ(many[2].num_threads, 1);
  EXPECT_TRUE(plan_workers(cpu_inventory(4), "", 2, false)[0].cpus.empty());
  EXPECT_EQ(plan_workers(cpu_inventory(4), "", -1, true).size(), 4u);
}

TEST(LaunchOptions, GpuIdsBecomeRelativeIndices) {
  DeviceInventory inv;
  inv.kind = DeviceKind::GPU;
  inv.ids = {4, 5};
  inv.cpus = {0, 1};
  inv.default_count = 2;
  auto slots = plan_workers(inv, "5", -1, true);
  ASSERT_EQ(slots.size(), 1u);
  EXPECT_EQ(slots[0].device_index, 1);
  EXPECT_TRUE(slots[0].cpus.empty());
  EXPECT_THROW(plan_workers(inv, "0", -1, true), ValueError);
  JobLayout job;
  job.device_kind = DeviceKind::GPU;
  auto env = worker_environment({}, job, slots[0], 1);
  EXPECT_NE(std::find(env.begin(), env.end(), "FLAGS_selected_gpus=1"), env.end());
}

TEST(LaunchOptions, BadCombinationsAreRejected) {
  EXPECT_THROW(plan_workers(cpu_inventory(2), "0,99", -1, true), ValueError);
  EXPECT_THROW(plan_workers(cpu_inventory(2), "0,1", 3, true), ValueError);
  LaunchOptions o;
  o.program = "x";
  EXPECT_NO_THROW(validate(o));
  o.nnodes = 2;
  EXPECT_THROW(validate(o), ValueError);  // no --master
  o.master = "127.0.0.1:1234";
  o.rank = 2;
  EXPECT_THROW(validate(o), ValueError);  // rank out of range
  o.rank = 1;
  EXPECT_NO_THROW(validate(o));
  o.master = "nohostport";
  EXPECT_THROW(validate(o), ValueError);
}

TEST(LaunchCommand, UnknownFlagIsAClearError) {
  TempDir dir;
  CrewRun r = run_crew(dir, {"launch", "--no_such_flag", "/bin/true"});
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.stderr_text.find("unknown option '--no_such_flag'"), std::string::npos) << r.stderr_text;
}

TEST(LaunchCommand, NonexistentDeviceIsAClearError) {
  TempDir dir;
  CrewRun r = run_crew(dir, {"launch", "--devices=0,999", "--log_dir", dir.file("log"), "/bin/true"});
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.stderr_text.find("device 999 does not exist"), std::string::npos) << r.stderr_text;
}

TEST(LaunchCommand, HelpAndUnknownSubcommand) {
  TempDir dir;
  CrewRun help = run_crew(dir, {"--help"});
  EXPECT_EQ(help.code, 0);
  EXPECT_NE(help.stdout_text.find("launch"), std::string::npos);
  CrewRun bad = run_crew(dir, {"frobnicate"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.stderr_text.find("unknown subcommand 'frobnicate'"), std::string::npos);
}

}  // namespace
}  // namespace crew::launch::testing
