// CommAffinityScope: threads created inside may run on CREW_COMM_CPUS; the caller's own
// affinity is restored after.
#include "crew/core/comm_affinity.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <stdlib.h>

#include <string>
#include <thread>
#include <vector>

namespace crew {
namespace {

std::vector<int> my_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  sched_getaffinity(0, sizeof(set), &set);
  std::vector<int> out;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) out.push_back(c);
  return out;
}

void pin_to(const std::vector<int>& cpus) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cpus) CPU_SET(c, &set);
  ASSERT_EQ(sched_setaffinity(0, sizeof(set), &set), 0);
}

TEST(CommAffinity, ParsesTheListAndRejectsJunk) {
  ::setenv("CREW_COMM_CPUS", "0,3,12", 1);
  EXPECT_EQ(comm_cpus_from_env(), (std::vector<int>{0, 3, 12}));
  for (const char* bad : {"none", "1,,2", "-1", "0,x", "99999"}) {
    ::setenv("CREW_COMM_CPUS", bad, 1);
    EXPECT_TRUE(comm_cpus_from_env().empty()) << bad;
  }
  ::unsetenv("CREW_COMM_CPUS");
  EXPECT_TRUE(comm_cpus_from_env().empty());
}

TEST(CommAffinity, AThreadStartedInsideMayRunOnTheListedCpus) {
  std::thread([] {  // a thread of its own, so the test's main thread keeps its affinity
    const std::vector<int> all = my_cpus();
    if (all.size() < 2) GTEST_SKIP() << "needs 2 CPUs";
    std::string list;
    for (int c : all) list += (list.empty() ? "" : ",") + std::to_string(c);
    ::setenv("CREW_COMM_CPUS", list.c_str(), 1);
    pin_to({all[0]});
    std::vector<int> inner;
    {
      CommAffinityScope wide;
      EXPECT_TRUE(wide.widened());
      std::thread([&] { inner = my_cpus(); }).join();
    }
    EXPECT_EQ(inner, all) << "the transport thread inherits the node's CPUs";
    EXPECT_EQ(my_cpus(), (std::vector<int>{all[0]})) << "the caller is pinned again";
    ::setenv("CREW_COMM_CPUS", "none", 1);
    CommAffinityScope off;
    EXPECT_FALSE(off.widened());
    ::unsetenv("CREW_COMM_CPUS");
  }).join();
}

}  // namespace
}  // namespace crew
