#include "crew/distributed/backends/shm/shm_op_queue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "crew/core/check.h"
#include "crew/core/error.h"

namespace crew::dist::detail {
namespace {

using namespace std::chrono_literals;

// A queue whose worker would leave a new op alone for a minute.
constexpr std::chrono::microseconds kLongDelay = std::chrono::minutes(1);

TEST(ShmOpQueue, PlainWaitRunsTheOpOnTheCallersThread) {
  ShmOpQueue queue(kLongDelay);
  std::thread::id ran_on;
  auto work = queue.push([&] { ran_on = std::this_thread::get_id(); }, "op", 30s, true);
  work->wait();
  EXPECT_TRUE(work->is_completed());
  EXPECT_EQ(ran_on, std::this_thread::get_id());
}

TEST(ShmOpQueue, ShortWaitStartsTheWorkerAtOnce) {
  // A caller's wait(timeout) never runs the op inline (it could not give up half-way); the
  // worker must not sit out its start delay meanwhile.
  ShmOpQueue queue(kLongDelay);
  std::thread::id ran_on;
  auto work = queue.push([&] { ran_on = std::this_thread::get_id(); }, "op", 30s, true);
  work->wait(20s);  // with the start delay honoured this throws TimeoutError after 20 s
  EXPECT_TRUE(work->is_completed());
  EXPECT_NE(ran_on, std::this_thread::get_id());
}

TEST(ShmOpQueue, ShortWaitRunsEveryEarlierOpFirstInOrder) {
  ShmOpQueue queue(kLongDelay);
  std::atomic<int> order{0};
  int first = -1, second = -1;
  auto a = queue.push([&] { first = order++; }, "a", 30s, true);
  auto b = queue.push([&] { second = order++; }, "b", 30s, true);
  b->wait(20s);
  EXPECT_TRUE(a->is_completed());
  EXPECT_EQ(first, 0);
  EXPECT_EQ(second, 1);
}

TEST(ShmOpQueue, ShortWaitOnASlowOpTimesOutAndTheOpStillCompletes) {
  ShmOpQueue queue(kLongDelay);
  std::atomic<bool> release{false};
  auto work = queue.push(
      [&] {
        while (!release.load()) std::this_thread::sleep_for(1ms);
      },
      "slow op", 30s, true);
  EXPECT_THROW(work->wait(50ms), TimeoutError);
  EXPECT_FALSE(work->is_completed());
  release = true;
  work->wait(20s);
  EXPECT_TRUE(work->is_completed());
}

TEST(ShmOpQueue, ShortWaitRethrowsTheOpsError) {
  ShmOpQueue queue(kLongDelay);
  auto work = queue.push([] { CREW_THROW(CommError, "all_reduce (rank 0): peer gone"); }, "op", 30s, true);
  try {
    work->wait(20s);
    FAIL() << "no error";
  } catch (const CommError& e) {
    EXPECT_NE(std::string(e.what()).find("peer gone"), std::string::npos) << e.what();
  }
}

// An op issued with async_op is started by the worker after its start delay; one issued
// without it is left to the caller's wait(), however late (no worker wake-up).
TEST(ShmOpQueue, OpIssuedNotAsyncIsLeftToTheCallersWait) {
  ShmOpQueue queue(std::chrono::microseconds(1000));
  std::thread::id async_on, at_once_on;
  auto async_op = queue.push([&] { async_on = std::this_thread::get_id(); }, "async", 30s, true);
  std::this_thread::sleep_for(200ms);
  EXPECT_TRUE(async_op->is_completed());  // the worker woke and ran it
  auto at_once_op = queue.push([&] { at_once_on = std::this_thread::get_id(); }, "at once", 30s, false);
  std::this_thread::sleep_for(200ms);
  EXPECT_FALSE(at_once_op->is_completed());  // the worker was not woken
  at_once_op->wait();
  EXPECT_NE(async_on, std::this_thread::get_id());
  EXPECT_EQ(at_once_on, std::this_thread::get_id());
}

TEST(ShmOpQueue, TimedWaitOnAnOpIssuedNotAsyncWakesTheWorker) {
  ShmOpQueue queue(std::chrono::microseconds(1000));
  auto work = queue.push([] {}, "op", 30s, false);
  work->wait(20s);  // cannot run inline: the worker must be told, or this times out
  EXPECT_TRUE(work->is_completed());
}

}  // namespace
}  // namespace crew::dist::detail
