// The backend registry, the group of one rank, Work/WorkQueue semantics and GlooOptions.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <future>

#include "crew/distributed/backends/gloo/gloo_process_group.h"
#include "crew/distributed/process_group/work_queue.h"
#include "crew/distributed/store/hash_store.h"

namespace crew::dist {
namespace {

using std::chrono::milliseconds;
using ::testing::HasSubstr;

TEST(PgRegistry, UnknownBackendListsTheRegisteredOnes) {
  register_backend("gloo", create_gloo_process_group);
  auto store = std::make_shared<HashStore>();
  try {
    create_process_group("mpi", store, 0, 2, ProcessGroupOptions{});
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_THAT(e.what(), HasSubstr("create_process_group (rank 0, group default): unknown backend 'mpi'"));
    EXPECT_THAT(e.what(), HasSubstr("gloo"));
  }
  EXPECT_TRUE(is_backend_registered("gloo"));
  EXPECT_FALSE(is_backend_registered("mpi"));
}

TEST(PgRegistry, RegisteredFactoryIsCalledWithRankSizeAndOptions) {
  int seen_rank = -1, seen_size = -1;
  std::string seen_name;
  register_backend("fake_for_test", [&](const std::shared_ptr<Store>&, int rank, int size,
                                        const ProcessGroupOptions& options) {
    seen_rank = rank;
    seen_size = size;
    seen_name = options.group_name;
    return create_self_process_group(options);
  });
  auto pg = create_process_group("fake_for_test", nullptr, 1, 3, ProcessGroupOptions{milliseconds(5), "g7"});
  EXPECT_EQ(seen_rank, 1);
  EXPECT_EQ(seen_size, 3);
  EXPECT_EQ(seen_name, "g7");
  EXPECT_THROW(create_process_group("fake_for_test", nullptr, 3, 3, ProcessGroupOptions{}), ValueError);
}

TEST(PgSelf, CollectivesOfOneRankAreLocalCopies) {
  auto pg = create_self_process_group();
  EXPECT_EQ(pg->backend_name(), "self");
  EXPECT_EQ(pg->size(), 1);
  Tensor t = Tensor::from_vector<int32_t>({3, 4});
  pg->all_reduce(t, {.op = ReduceOp::AVG})->wait();
  EXPECT_EQ(t.to_vector<int32_t>(), (std::vector<int32_t>{3, 4}));
  std::vector<Tensor> outs{Tensor::empty({2}, DType::INT32)};
  pg->all_gather(outs, t)->wait();
  EXPECT_EQ(outs[0].to_vector<int32_t>(), (std::vector<int32_t>{3, 4}));
  Tensor out = Tensor::empty({2}, DType::INT32);
  pg->reduce_scatter(out, {Tensor::from_vector<int32_t>({7, 8})}, {.op = ReduceOp::SUM})->wait();
  EXPECT_EQ(out.to_vector<int32_t>(), (std::vector<int32_t>{7, 8}));
  EXPECT_TRUE(pg->barrier()->is_completed());
  EXPECT_THROW(pg->broadcast(t, {.root = 1}), ValueError);
  EXPECT_THROW(pg->send(t, 0, {.tag = 0}), ValueError);
}

TEST(PgWork, FailureIsRethrownAndLaterOpsFailFast) {
  WorkQueue queue("q", 2, milliseconds(1000));
  auto ok = queue.submit("barrier", [](const OpInfo& info) { EXPECT_EQ(info.seq, 0u); });
  auto bad = queue.submit("all_reduce",
                          [](const OpInfo& info) { throw CommError(info.describe() + ": peer gone"); });
  std::atomic<bool> ran{false};
  auto after = queue.submit("broadcast", [&](const OpInfo&) { ran = true; });
  ok->wait();
  try {
    bad->wait();
    FAIL() << "expected CommError";
  } catch (const CommError& e) {
    EXPECT_STREQ(e.what(), "all_reduce (rank 2, seq 1, group q): peer gone");
  }
  try {
    after->wait();
    FAIL() << "expected CommError";
  } catch (const CommError& e) {
    EXPECT_STREQ(e.what(),
                 "broadcast (rank 2, seq 2, group q): the group is unusable after an earlier failure: "
                 "all_reduce (rank 2, seq 1, group q): peer gone");
  }
  EXPECT_FALSE(ran);
  EXPECT_EQ(queue.submitted(), 3u);
}

TEST(PgWork, ValueErrorsDoNotBreakTheQueue) {
  WorkQueue queue("q", 0, milliseconds(1000));
  auto bad = queue.submit("op", [](const OpInfo&) { throw ValueError("bad input"); });
  auto good = queue.submit("op", [](const OpInfo&) {});
  EXPECT_THROW(bad->wait(), ValueError);
  EXPECT_NO_THROW(good->wait());
}

TEST(PgWork, DestroyingTheQueueFailsOpsThatNeverRan) {
  std::promise<void> release;
  auto released = release.get_future().share();
  std::shared_ptr<FutureWork> blocked, pending;
  {
    WorkQueue queue("q", 0, milliseconds(1000));
    blocked = queue.submit("first", [&](const OpInfo&) { released.wait(); });
    pending = queue.submit("second", [](const OpInfo&) {});
    release.set_value();
  }
  EXPECT_TRUE(blocked->is_completed());
  EXPECT_TRUE(pending->is_completed());
  // "second" either ran before the stop was seen or was failed with StateError.
  try {
    pending->wait(milliseconds(0));
  } catch (const StateError& e) {
    EXPECT_THAT(e.what(), HasSubstr("second (rank 0, seq 1, group q): the process group was destroyed"));
  }
}

// Submitted with async_op = false, an op does not wake the worker: the caller's wait() runs
// it; a wait(timeout), which never runs an op inline, wakes the worker instead.
TEST(PgWork, OpSubmittedNotAsyncRunsInTheCallersWait) {
  WorkQueue queue("q", 0, milliseconds(30000));
  std::thread::id ran_on, short_ran_on;
  std::shared_ptr<FutureWork> work, short_wait;
  queue.submit("warm-up", [](const OpInfo&) {})->wait(milliseconds(20000));  // the worker ran it
  std::this_thread::sleep_for(milliseconds(100));                            // and sleeps again
  work = queue.submit(
      "op", [&](const OpInfo&) { ran_on = std::this_thread::get_id(); }, /*async_op=*/false);
  std::this_thread::sleep_for(milliseconds(200));
  EXPECT_FALSE(work->is_completed());  // with async_op the woken worker has run it by now
  work->wait();
  EXPECT_EQ(ran_on, std::this_thread::get_id());
  short_wait = queue.submit(
      "op", [&](const OpInfo&) { short_ran_on = std::this_thread::get_id(); }, /*async_op=*/false);
  short_wait->wait(milliseconds(20000));
  EXPECT_NE(short_ran_on, std::this_thread::get_id());
}

TEST(PgWork, InlineWaitsKeepIssueOrderAndNeverOverlap) {
  WorkQueue queue("q", 0, milliseconds(5000));
  std::vector<int> order;
  std::atomic<int> in_flight{0};
  std::atomic<bool> overlapped{false};
  std::vector<std::shared_ptr<FutureWork>> works;
  for (int i = 0; i < 200; ++i) {
    works.push_back(queue.submit("op", [&, i](const OpInfo& info) {
      if (in_flight.fetch_add(1) != 0) overlapped = true;
      order.push_back(i);
      EXPECT_EQ(info.seq, static_cast<uint64_t>(i));
      in_flight.fetch_sub(1);
    }));
  }
  // Forward waits may run ops inline, the worker runs the rest; both in issue order.
  for (size_t i = 0; i < works.size(); i += 2) works[i]->wait();
  for (auto& w : works) w->wait();
  EXPECT_FALSE(overlapped);
  std::vector<int> expected(200);
  for (int i = 0; i < 200; ++i) expected[i] = i;
  EXPECT_EQ(order, expected);
}

TEST(PgWork, FormatDuration) {
  EXPECT_EQ(format_duration(milliseconds(30000)), "30 s");
  EXPECT_EQ(format_duration(milliseconds(1500)), "1500 ms");
  EXPECT_EQ(format_duration(std::chrono::minutes(30)), "30 min");
}

TEST(PgGlooOptions, EnvironmentChoosesTheAddress) {
  ::unsetenv("CREW_HOST");
  ::unsetenv("CREW_GLOO_IFNAME");
  ::unsetenv("CREW_NNODES");
  ::unsetenv("PADDLE_NNODES");
  EXPECT_EQ(GlooOptions::from_env().hostname, "127.0.0.1");
  ::setenv("CREW_NNODES", "2", 1);
  EXPECT_EQ(GlooOptions::from_env().hostname, "");
  ::setenv("CREW_HOST", "10.1.2.3", 1);
  ::setenv("CREW_GLOO_IFNAME", "eth1", 1);
  EXPECT_EQ(GlooOptions::from_env().hostname, "10.1.2.3");
  EXPECT_EQ(GlooOptions::from_env().iface, "eth1");
  ::unsetenv("CREW_HOST");
  ::unsetenv("CREW_GLOO_IFNAME");
  ::unsetenv("CREW_NNODES");
}

TEST(PgGlooRendezvous, MissingPeerTimesOutNamingTheGroup) {
  auto store = std::make_shared<HashStore>();
  try {
    GlooProcessGroup pg(store, 0, 2, ProcessGroupOptions{milliseconds(300), "lonely"});
    FAIL() << "expected TimeoutError";
  } catch (const TimeoutError& e) {
    EXPECT_THAT(e.what(), HasSubstr("gloo rendezvous (rank 0 of 2, group lonely)"));
  }
}

}  // namespace
}  // namespace crew::dist
