// GlooProcessGroup failures: timeouts and peers that leave give typed errors naming the op,
// its sequence number, the group and the rank, within the group's (short) timeout.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <future>
#include <thread>

#include "crew/distributed/backends/gloo/gloo_process_group.h"
#include "crew/distributed/store/hash_store.h"

namespace crew::dist {
namespace {

using std::chrono::milliseconds;
using ::testing::HasSubstr;

// Two threads, one Gloo group each (timeout `timeout`), running fn0 and fn1.
void run_pair(milliseconds timeout, const std::function<void(ProcessGroup&)>& fn0,
              const std::function<void(std::unique_ptr<ProcessGroup>&)>& fn1) {
  auto store = std::make_shared<HashStore>();
  std::promise<void> made;
  std::thread t1([&] {
    std::unique_ptr<ProcessGroup> pg =
        std::make_unique<GlooProcessGroup>(store, 1, 2, ProcessGroupOptions{timeout, "fail"});
    fn1(pg);
  });
  {
    GlooProcessGroup pg(store, 0, 2, ProcessGroupOptions{timeout, "fail"});
    fn0(pg);
  }
  t1.join();
}

TEST(PgGlooFault, TimeoutNamesOpSeqGroupAndRankThenGroupIsUnusable) {
  std::promise<void> rank0_done;
  auto done = rank0_done.get_future().share();
  run_pair(
      milliseconds(1000),
      [&](ProcessGroup& pg) {
        Tensor t = Tensor::ones({4});
        try {
          pg.all_reduce(t, {.op = ReduceOp::SUM})->wait();
          ADD_FAILURE() << "expected TimeoutError";
        } catch (const TimeoutError& e) {
          EXPECT_THAT(e.what(), HasSubstr("all_reduce (rank 0, seq 0, group fail): timed out after 1 s"));
        }
        try {
          pg.barrier()->wait();
          ADD_FAILURE() << "expected CommError";
        } catch (const CommError& e) {
          EXPECT_THAT(e.what(),
                      HasSubstr("barrier (rank 0, seq 1, group fail): the group is unusable after an "
                                "earlier failure: all_reduce (rank 0, seq 0, group fail): timed out"));
        }
        rank0_done.set_value();
      },
      [&](std::unique_ptr<ProcessGroup>&) { done.wait(); });  // rank 1 never joins the all_reduce
}

TEST(PgGlooFault, PeerThatLeavesGivesCommErrorOrTimeout) {
  run_pair(
      milliseconds(3000),
      [&](ProcessGroup& pg) {
        Tensor t = Tensor::ones({1 << 16});
        try {
          for (int i = 0; i < 4; ++i) pg.all_reduce(t, {.op = ReduceOp::SUM})->wait();
          ADD_FAILURE() << "expected a failure after the peer left";
        } catch (const CommError& e) {
          EXPECT_THAT(e.what(), HasSubstr("(rank 0, seq"));
          EXPECT_THAT(e.what(), HasSubstr("group fail"));
        } catch (const TimeoutError& e) {
          EXPECT_THAT(e.what(), HasSubstr("(rank 0, seq"));
        }
      },
      [&](std::unique_ptr<ProcessGroup>& pg) {
        Tensor t = Tensor::ones({1 << 16});
        pg->all_reduce(t, {.op = ReduceOp::SUM})->wait();
        pg.reset();  // leaves: closes every connection
      });
}

TEST(PgGlooFault, WorkWaitTimesOutWhileTheOpStillCompletesLater) {
  std::promise<void> waited;
  auto waited_future = waited.get_future().share();
  run_pair(
      milliseconds(20000),
      [&](ProcessGroup& pg) {
        Tensor t = Tensor::full({3}, 2.0);
        auto work = pg.all_reduce(t, {.op = ReduceOp::SUM});
        try {
          work->wait(milliseconds(200));
          ADD_FAILURE() << "expected TimeoutError";
        } catch (const TimeoutError& e) {
          EXPECT_STREQ(e.what(), "all_reduce (rank 0, seq 0, group fail): did not complete within 200 ms");
        }
        EXPECT_FALSE(work->is_completed());
        waited.set_value();
        work->wait();
        EXPECT_EQ(t.to_vector<float>(), std::vector<float>(3, 5.0f));
      },
      [&](std::unique_ptr<ProcessGroup>& pg) {
        waited_future.wait();
        Tensor t = Tensor::full({3}, 3.0);
        pg->all_reduce(t, {.op = ReduceOp::SUM})->wait();
      });
}

}  // namespace
}  // namespace crew::dist
