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
#include "tests/testing/child_expect.h"
#include "tests/testing/store_ptr.h"

namespace crew::dist {
namespace {

using testing::describe;
using testing::shm::run_ranks;

std::shared_ptr<ProcessGroup> make_hier(Store& store, int rank, int world,
                                        std::chrono::milliseconds timeout) {
  ::setenv("CREW_HOST_ID", ("simhost" + std::to_string(rank / 2)).c_str(), 1);
  return create_hier_process_group(testing::borrow_store(store), rank, world,
                                   ProcessGroupOptions{timeout, "default"});
}

void run_killing(int victim) {
  // The 90 s deadline is well under the 120 s group timeout: a wait for it fails the test.
  auto results =
      run_ranks(4,
                [victim](int rank, Store& store) {
                  auto pg = make_hier(store, rank, 4, std::chrono::seconds(120));
                  Tensor t = Tensor::ones({5000});
                  pg->all_reduce(t, {.op = ReduceOp::SUM})->wait();
                  CHILD_EXPECT(t.to_vector<float>()[4999] == 4.0f);
                  if (rank == victim) ::raise(SIGKILL);
                  for (int i = 0; i < 2; ++i) {
                    Tensor u = Tensor::ones({5000});
                    const std::string msg = testing::expect_throws<CommError>(
                        [&] { pg->all_reduce(u, {.op = ReduceOp::SUM})->wait(); },
                        {"all_reduce (rank " + std::to_string(rank)});
                    if (i == 1)
                      CHILD_EXPECT(msg.find("unusable after an earlier failure") != std::string::npos, msg);
                  }
                },
                {.timeout = std::chrono::seconds(90)});
  for (int r = 0; r < 4; ++r) {
    if (r == victim) {
      EXPECT_EQ(results[r].signal, SIGKILL) << describe(results[r]);
    } else {
      EXPECT_TRUE(results[r].ok()) << "victim " << victim << ", " << describe(results[r]);
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
          pg->all_reduce(t, {.op = ReduceOp::SUM})->wait();
        } catch (const TimeoutError& e) {
          error = e.what();
          timed_out = true;
        } catch (const CommError& e) {
          error = e.what();
        }
        store.set("failed/" + std::to_string(rank), error);  // first, so rank 3 never waits long
        CHILD_EXPECT(!error.empty(), "all_reduce without rank 3 did not fail");
        CHILD_EXPECT(error.find("all_reduce (rank " + std::to_string(rank)) != std::string::npos, error);
        if (rank == 2) {
          CHILD_EXPECT(timed_out && error.find("intra-host reduce") != std::string::npos, error);
          CHILD_EXPECT(error.find("timed out after 3000 ms waiting for rank 1") != std::string::npos, error);
        }
      },
      {.timeout = std::chrono::seconds(60)});
  testing::expect_all_ok(results);
}

TEST(HierFault, KilledLeaderFailsEveryRank) { run_killing(0); }

}  // namespace
}  // namespace crew::dist
