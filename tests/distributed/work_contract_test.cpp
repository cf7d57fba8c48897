// The Work contract of process_group.h and the per-collective options, on the Gloo backend
// (two ranks as threads of this process) and the shm backend (two forked ranks): an async op
// waited for later, a synchronous one, then() callbacks, a caller's wait(timeout) that runs
// out (the op goes on), and an options timeout that bounds the op itself.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <thread>

#include "crew/core/timer.h"
#include "crew/distributed/backends/gloo/gloo_process_group.h"
#include "crew/distributed/process_group/work.h"
#include "crew/distributed/store/hash_store.h"
#include "tests/distributed/shm_harness.h"
#include "tests/testing/child_expect.h"

namespace crew::dist {
namespace {

using std::chrono::milliseconds;
using ::testing::HasSubstr;

// Two threads, one Gloo group "contract" each (group timeout 60 s), running fn(rank, pg).
void run_gloo_pair(const std::function<void(int, ProcessGroup&)>& fn) {
  auto store = std::make_shared<HashStore>();
  auto body = [&](int rank) {
    GlooProcessGroup pg(store, rank, 2, ProcessGroupOptions{std::chrono::seconds(60), "contract"});
    fn(rank, pg);
  };
  std::thread t1([&] { body(1); });
  body(0);
  t1.join();
}

TEST(WorkContract, AsyncOpWaitedLaterRunsItsCallbackOnce) {
  run_gloo_pair([](int rank, ProcessGroup& pg) {
    Tensor t = Tensor::full({3}, rank + 1.0);
    std::atomic<int> calls{0};
    std::atomic<bool> failed{false};
    auto work = pg.all_reduce(t, {.op = ReduceOp::SUM});  // async_op defaults to true
    work->then([&](std::exception_ptr error) {
      ++calls;
      failed = error != nullptr;
    });
    work->wait();
    EXPECT_EQ(t.to_vector<float>(), std::vector<float>(3, 3.0f));
    // The callback runs on the completing thread right after the waiters are released.
    const Deadline deadline(milliseconds(10000));
    while (calls.load() == 0 && !deadline.expired()) std::this_thread::sleep_for(milliseconds(1));
    EXPECT_EQ(calls.load(), 1);
    EXPECT_FALSE(failed.load());
    // On a completed op, then() runs at once on the calling thread.
    std::thread::id ran_on;
    work->then([&](std::exception_ptr) { ran_on = std::this_thread::get_id(); });
    EXPECT_EQ(ran_on, std::this_thread::get_id());
  });
}

TEST(WorkContract, SyncOpsTakeTheirOptions) {
  run_gloo_pair([](int rank, ProcessGroup& pg) {
    Tensor t = Tensor::full({2}, rank + 1.0);
    pg.all_reduce(t, {.op = ReduceOp::MAX, .async_op = false})->wait();
    EXPECT_EQ(t.to_vector<float>(), std::vector<float>(2, 2.0f));
    Tensor b = Tensor::full({2}, rank * 10.0);
    pg.broadcast(b, {.root = 1, .async_op = false})->wait();
    EXPECT_EQ(b.to_vector<float>(), std::vector<float>(2, 10.0f));
    Tensor r = Tensor::full({1}, rank + 1.0);
    pg.reduce(r, {.root = 0, .op = ReduceOp::PROD, .async_op = false})->wait();
    if (rank == 0) EXPECT_EQ(r.to_vector<float>(), std::vector<float>{2.0f});
    pg.barrier({.async_op = false})->wait();
  });
}

TEST(WorkContract, TimedWaitNamesTheOpAndTheOpGoesOn) {
  std::promise<void> timed_out;
  auto timed_out_future = timed_out.get_future().share();
  run_gloo_pair([&](int rank, ProcessGroup& pg) {
    Tensor t = Tensor::full({4}, 1.0);
    if (rank == 1) {
      timed_out_future.wait();  // joins only after rank 0's short waits ran out
      pg.all_reduce(t, {.op = ReduceOp::SUM})->wait();
      return;
    }
    auto work = pg.all_reduce(t, {.op = ReduceOp::SUM, .async_op = false});
    try {
      work->wait(milliseconds(50));
      ADD_FAILURE() << "expected TimeoutError";
    } catch (const TimeoutError& e) {
      EXPECT_STREQ(e.what(), "all_reduce (rank 0, seq 0, group contract): did not complete within 50 ms");
    }
    EXPECT_THROW(work->wait(milliseconds(0)), TimeoutError);  // a poll
    EXPECT_FALSE(work->is_completed());                       // the caller's limit, not the op's
    timed_out.set_value();
    work->wait();  // the op went on and completes once rank 1 joins
    EXPECT_TRUE(work->is_completed());
    EXPECT_EQ(t.to_vector<float>(), std::vector<float>(4, 2.0f));
    EXPECT_NO_THROW(work->wait(milliseconds(0)));
  });
}

TEST(WorkContract, OptionsTimeoutBoundsTheOpAndReachesTheCallback) {
  std::promise<void> done;
  auto done_future = done.get_future().share();
  run_gloo_pair([&](int rank, ProcessGroup& pg) {
    if (rank == 1) {
      done_future.wait();  // never joins the all_reduce
      return;
    }
    Tensor t = Tensor::ones({4});
    std::promise<std::exception_ptr> seen;
    const auto start = Clock::now();
    auto work = pg.all_reduce(t, {.op = ReduceOp::SUM, .timeout = milliseconds(300)});
    work->then([&](std::exception_ptr error) { seen.set_value(error); });
    try {
      work->wait();
      ADD_FAILURE() << "expected TimeoutError";
    } catch (const TimeoutError& e) {
      EXPECT_THAT(e.what(), HasSubstr("all_reduce (rank 0, seq 0, group contract): timed out after 300 ms"));
    }
    EXPECT_LT(Clock::now() - start, std::chrono::seconds(30));  // not the group's 60 s
    EXPECT_TRUE(work->is_completed());
    auto error = seen.get_future().get();
    EXPECT_THROW(std::rethrow_exception(error), TimeoutError);
    done.set_value();
  });
}

TEST(WorkContract, CompletedWorkRunsCallbacksAtOnce) {
  auto pg = create_self_process_group();
  Tensor t = Tensor::ones({2});
  auto work = pg->all_reduce(t, {.op = ReduceOp::AVG, .async_op = false});
  bool ran = false;
  work->then([&](std::exception_ptr error) { ran = error == nullptr; });
  EXPECT_TRUE(ran);
  EXPECT_NO_THROW(work->wait(milliseconds(0)));
}

// The same contract on shm, whose Work is its own (ShmWork): a timed wait never runs the op
// inline and names it; the options timeout bounds the op (its error names the missing rank).
TEST(WorkContract, ShmKeepsTheContract) {
  testing::shm::set_unique_job("contract");
  auto results = testing::shm::run_ranks(2, [](int rank, Store& store) {
    ProcessGroupOptions options;
    options.timeout = std::chrono::seconds(60);
    auto pg = create_shm_process_group(testing::borrow_store(store), rank, 2, options, ShmOptions{});
    Tensor t = Tensor::full({3}, rank + 1.0);
    pg->all_reduce(t, {.op = ReduceOp::SUM, .async_op = false})->wait();
    CHILD_EXPECT(t.to_vector<float>() == std::vector<float>(3, 3.0f), "sync all_reduce");
    std::atomic<int> calls{0};
    auto async_work = pg->all_reduce(t, {.op = ReduceOp::MAX});
    async_work->then([&](std::exception_ptr error) { calls += error ? 100 : 1; });
    async_work->wait();
    const Deadline deadline(milliseconds(10000));
    while (calls.load() == 0 && !deadline.expired()) std::this_thread::sleep_for(milliseconds(1));
    CHILD_EXPECT(calls.load() == 1, "then() callback calls: ", calls.load());
    if (rank == 1) {
      store.wait({"rank0_timed_out"}, std::chrono::seconds(30));
      return;
    }
    Tensor u = Tensor::ones({3});
    auto work = pg->all_reduce(u, {.op = ReduceOp::SUM, .timeout = milliseconds(300), .async_op = false});
    testing::expect_throws<TimeoutError>(
        [&] { work->wait(milliseconds(20)); },
        {"all_reduce (rank 0, seq 2, group default)", "did not complete within 20 ms"});
    CHILD_EXPECT(!work->is_completed(), "a caller's short wait ended the op");
    testing::expect_throws<TimeoutError>(
        [&] { work->wait(); }, {"all_reduce (rank 0, seq 2", "timed out after 300 ms waiting for rank 1"});
    store.set("rank0_timed_out", std::vector<uint8_t>{1});
  });
  testing::expect_all_ok(results);
}

}  // namespace
}  // namespace crew::dist
