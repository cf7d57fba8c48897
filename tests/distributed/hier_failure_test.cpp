// Failure paths of the hierarchical backend on 2 simulated hosts x 2 ranks: a rank killed
// mid-job makes every other rank fail with CommError well within the group timeout (each
// failing rank tears down its sub-groups, so the failure crosses the hierarchy), and later
// ops fail at once.
#include <gtest/gtest.h>
#include <signal.h>

#include <cstdlib>
#include <string>

#include "crew/distributed/backends/hier/hier_process_group.h"
#include "tests/distributed/shm_harness.h"

namespace crew::dist {
namespace {

using testing::shm::run_ranks;

std::shared_ptr<ProcessGroup> make_hier(Store& store, int rank, int world,
                                        std::chrono::milliseconds timeout) {
  ::setenv("CREW_HOST_ID", ("simhost" + std::to_string(rank / 2)).c_str(), 1);
  std::shared_ptr<Store> borrowed(&store, [](Store*) {});
  return create_hier_process_group(borrowed, rank, world, ProcessGroupOptions{timeout, "default"});
}

void run_killing(int victim) {
  auto results = run_ranks(
      4,
      [victim](int rank, Store& store) {
        auto pg = make_hier(store, rank, 4, std::chrono::seconds(120));
        Tensor t = Tensor::ones({5000});
        pg->all_reduce(t, ReduceOp::SUM)->wait();
        SHM_REQUIRE(t.to_vector<float>()[4999] == 4.0f);
        if (rank == victim) ::raise(SIGKILL);
        for (int i = 0; i < 2; ++i) {
          Tensor u = Tensor::ones({5000});
          try {
            pg->all_reduce(u, ReduceOp::SUM)->wait();
          } catch (const CommError& e) {
            const std::string msg = e.what();
            SHM_REQUIRE(msg.find("all_reduce (rank " + std::to_string(rank)) != std::string::npos, msg);
            if (i == 1) SHM_REQUIRE(msg.find("unusable after an earlier failure") != std::string::npos, msg);
            continue;
          }
          SHM_REQUIRE(false, "all_reduce after rank ", victim, " died did not fail");
        }
      },
      std::chrono::seconds(90));  // well under the 120 s group timeout: a wait for it fails the test
  for (int r = 0; r < 4; ++r) {
    if (r == victim) {
      EXPECT_EQ(results[r].signal, SIGKILL);
    } else {
      EXPECT_TRUE(results[r].ok()) << "rank " << r << " (victim " << victim << "): exit "
                                   << results[r].exit_code << ", signal " << results[r].signal
                                   << (results[r].timed_out ? ", timed out" : "");
    }
  }
}

TEST(HierFault, KilledNonLeaderFailsEveryRank) { run_killing(3); }

// A rank that is alive but never joins the all_reduce: the rank waiting on it directly (rank
// 2, in the intra-host reduce) times out after the group timeout (3 s); the others fail too,
// either through its teardown (CommError) or by their own phase's timeout, whichever comes
// first; nobody hangs.
TEST(HierFault, MissingRankFailsEveryRankWithinTheTimeout) {
  auto results = run_ranks(
      4,
      [](int rank, Store& store) {
        auto pg = make_hier(store, rank, 4, std::chrono::milliseconds(3000));
        pg->barrier()->wait();
        if (rank == 3) {
          store.wait({"failed/0", "failed/1", "failed/2"}, std::chrono::seconds(60));
          return;
        }
        Tensor t = Tensor::ones({100});
        std::string error;
        bool timed_out = false;
        try {
          pg->all_reduce(t, ReduceOp::SUM)->wait();
        } catch (const TimeoutError& e) {
          error = e.what();
          timed_out = true;
        } catch (const CommError& e) {
          error = e.what();
        }
        store.set("failed/" + std::to_string(rank), error);  // first, so rank 3 never waits long
        SHM_REQUIRE(!error.empty(), "all_reduce without rank 3 did not fail");
        SHM_REQUIRE(error.find("all_reduce (rank " + std::to_string(rank)) != std::string::npos, error);
        if (rank == 2) {
          SHM_REQUIRE(timed_out && error.find("intra-host reduce") != std::string::npos, error);
          SHM_REQUIRE(error.find("timed out after 3000 ms waiting for rank 1") != std::string::npos, error);
        }
      },
      std::chrono::seconds(60));
  for (int r = 0; r < 4; ++r) {
    EXPECT_TRUE(results[r].ok()) << "rank " << r << ": exit " << results[r].exit_code
                                 << (results[r].timed_out ? ", timed out" : "");
  }
}

TEST(HierFault, KilledLeaderFailsEveryRank) { run_killing(0); }

}  // namespace
}  // namespace crew::dist
