// Failure paths of the shm backend: a rank killed or exiting mid-job, a rank that left the
// group, mismatched collectives, timeouts, a /dev/shm too small; and that no segment is ever
// left in /dev/shm.
#include <gtest/gtest.h>
#include <signal.h>

#include <cstdlib>
#include <string>
#include <thread>

#include "crew/distributed/backends/shm/shm_process_group.h"
#include "tests/distributed/shm_harness.h"
#include "tests/testing/child_expect.h"
#include "tests/testing/store_ptr.h"

namespace crew::dist {
namespace {

using testing::borrow_store;
using testing::describe;
using testing::expect_all_ok;
using testing::expect_throws;
using testing::shm::run_ranks;
using testing::shm::set_unique_job;
using testing::shm::shm_entries;

std::shared_ptr<ProcessGroup> make_group(Store& store, int rank, int world, std::chrono::milliseconds timeout,
                                         ShmOptions shm = {}) {
  ProcessGroupOptions options;
  options.timeout = timeout;
  shm.buffer_bytes = 8192;
  return create_shm_process_group(borrow_store(store), rank, world, options, shm);
}

// A rank SIGKILLed mid-job: the survivors' next collective fails with CommError naming it
// (long before the 60 s group timeout), later ops fail at once, and /dev/shm is clean.
TEST(ShmFault, KilledRankFailsPeersAndLeavesNoSegment) {
  const std::string prefix = set_unique_job("shmfail");
  auto results = run_ranks(3, [&](int rank, Store& store) {
    auto pg = make_group(store, rank, 3, std::chrono::seconds(60));
    Tensor t = Tensor::ones({20000});
    pg->all_reduce(t, {.op = ReduceOp::SUM})->wait();
    if (rank == 2) ::raise(SIGKILL);
    for (int i = 0; i < 3; ++i) {
      Tensor u = Tensor::ones({20000});
      auto msg =
          expect_throws<CommError>([&] { pg->all_reduce(u, {.op = ReduceOp::SUM})->wait(); },
                                   {"all_reduce (rank " + std::to_string(rank), "group default", "rank 2"});
      if (i > 0) CHILD_EXPECT(msg.find("unusable after an earlier failure") != std::string::npos, msg);
    }
  });
  EXPECT_EQ(results[2].signal, SIGKILL) << describe(results[2]);
  EXPECT_TRUE(results[0].ok()) << describe(results[0]);
  EXPECT_TRUE(results[1].ok()) << describe(results[1]);
  EXPECT_TRUE(shm_entries(prefix).empty());
}

// A rank that _exits while its peers wait in a barrier.
TEST(ShmFault, ExitedRankFailsBarrierAndRecv) {
  const std::string prefix = set_unique_job("shmfail");
  auto results = run_ranks(2, [&](int rank, Store& store) {
    auto pg = make_group(store, rank, 2, std::chrono::seconds(60));
    pg->barrier()->wait();
    if (rank == 1) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      ::_exit(3);
    }
    Tensor in = Tensor::zeros({10});
    auto recv = pg->recv(in, 1, {.tag = 0});
    expect_throws<CommError>([&] { recv->wait(); }, {"recv (rank 0", "rank 1 (pid", "died"});
    expect_throws<CommError>([&] { pg->barrier()->wait(); }, {"barrier (rank 0"});
  });
  EXPECT_EQ(results[1].exit_code, 3) << describe(results[1]);
  EXPECT_TRUE(results[0].ok()) << describe(results[0]);
  EXPECT_TRUE(shm_entries(prefix).empty());
}

// A rank that destroys its group while a peer still waits on it.
TEST(ShmFault, RankThatLeftTheGroup) {
  auto results = run_ranks(2, [&](int rank, Store& store) {
    auto pg = make_group(store, rank, 2, std::chrono::seconds(60));
    pg->barrier()->wait();
    if (rank == 1) {
      pg.reset();
      std::this_thread::sleep_for(std::chrono::milliseconds(300));  // still alive, but gone from the group
      return;
    }
    expect_throws<CommError>([&] { pg->barrier()->wait(); }, {"rank 1", "left the group"});
  });
  EXPECT_TRUE(results[0].ok()) << describe(results[0]);
  EXPECT_TRUE(results[1].ok()) << describe(results[1]);
}

// Mismatched collectives fail on every rank at the same round; the group stays usable.
TEST(ShmFault, MismatchedCollectivesAreReportedAndGroupRecovers) {
  auto results = run_ranks(3, [&](int rank, Store& store) {
    auto pg = make_group(store, rank, 3, std::chrono::seconds(60));
    Tensor t = Tensor::ones({rank == 1 ? 7 : 8});
    expect_throws<CommError>([&] { pg->all_reduce(t, {.op = ReduceOp::SUM})->wait(); },
                             {"all_reduce (rank " + std::to_string(rank), "elements", "same order"});
    if (rank == 2) {
      Tensor b = Tensor::ones({8});
      expect_throws<CommError>([&] { pg->broadcast(b, {.root = 0})->wait(); }, {"issued all_reduce"});
    } else {
      Tensor a = Tensor::ones({8});
      expect_throws<CommError>([&] { pg->all_reduce(a, {.op = ReduceOp::SUM})->wait(); },
                               {"issued broadcast"});
    }
    Tensor u = Tensor::full({5000}, rank + 1.0);
    pg->all_reduce(u, {.op = ReduceOp::SUM})->wait();
    CHILD_EXPECT(u.to_vector<float>()[4999] == 6.0f, "after recovery got ", u.to_vector<float>()[4999]);
  });
  expect_all_ok(results);
}

// A rank that never joins the collective: TimeoutError naming the op and the awaited rank.
TEST(ShmFault, TimeoutNamesTheOpAndTheRank) {
  auto results = run_ranks(2, [&](int rank, Store& store) {
    auto pg = make_group(store, rank, 2, std::chrono::milliseconds(300));
    if (rank == 0) {
      Tensor t = Tensor::ones({4});
      expect_throws<TimeoutError>([&] { pg->all_reduce(t, {.op = ReduceOp::MAX})->wait(); },
                                  {"all_reduce (rank 0, seq 0, group default)", "timed out", "rank 1"});
      store.set("done", "1");
    } else {
      store.wait({"done"});
    }
  });
  expect_all_ok(results);
}

// Work::wait(timeout) running out: TimeoutError from wait, the op goes on.
TEST(ShmFault, WorkWaitTimeout) {
  auto results = run_ranks(2, [&](int rank, Store& store) {
    auto pg = make_group(store, rank, 2, std::chrono::seconds(60));
    if (rank == 0) {
      Tensor t = Tensor::ones({4});
      auto work = pg->all_reduce(t, {.op = ReduceOp::SUM});
      // Rank 1 has not joined yet: a short wait gives up without cancelling the op.
      expect_throws<TimeoutError>([&] { work->wait(std::chrono::milliseconds(10)); }, {"did not complete"});
      store.set("go", "1");
      work->wait();
      CHILD_EXPECT(t.to_vector<float>()[0] == 2.0f);
    } else {
      store.wait({"go"});
      Tensor t = Tensor::ones({4});
      pg->all_reduce(t, {.op = ReduceOp::SUM})->wait();
    }
  });
  expect_all_ok(results);
}

TEST(ShmFault, DevShmTooSmallNamesTheSizes) {
  const std::string prefix = set_unique_job("shmfail");
  auto results = run_ranks(1, [&](int rank, Store& store) {
    ShmOptions shm;
    shm.mailbox_bytes = size_t{1} << 40;  // 1 TiB per pair
    const size_t need = shm_segment_bytes(1, shm);
    ProcessGroupOptions options;
    expect_throws<CommError>([&] { create_shm_process_group(borrow_store(store), 0, 1, options, shm); },
                             {"too small", "need " + std::to_string(need) + " bytes", "available"});
  });
  EXPECT_TRUE(results[0].ok()) << describe(results[0]);
  EXPECT_TRUE(shm_entries(prefix).empty());
}

// Every rank learns of rank 0's failure at once (the caller can then fall back to Gloo).
TEST(ShmFault, SegmentCreationFailureReachesEveryRank) {
  auto results = run_ranks(2, [&](int rank, Store& store) {
    ShmOptions shm;
    shm.mailbox_bytes = size_t{1} << 40;
    const std::string expected =
        rank == 0 ? "too small" : "rank 0 could not create the shared-memory segment";
    expect_throws<CommError>(
        [&] { create_shm_process_group(borrow_store(store), rank, 2, ProcessGroupOptions{}, shm); },
        {expected, "need "});
  });
  expect_all_ok(results);
}

// A child fork()ed by a rank (e.g. a data worker) that destroys its copy of the group must
// neither hang nor mark the rank as gone.
TEST(ShmFault, ForkedChildDoesNotSpeakForTheRank) {
  auto results = run_ranks(2, [&](int rank, Store& store) {
    auto pg = make_group(store, rank, 2, std::chrono::seconds(60));
    pg->barrier()->wait();
    if (rank == 0) {
      pid_t child = ::fork();
      if (child == 0) {
        pg.reset();
        ::_exit(0);
      }
      int status = 0;
      Deadline deadline(std::chrono::seconds(20));
      while (::waitpid(child, &status, WNOHANG) == 0) {
        if (deadline.expired()) {
          ::kill(child, SIGKILL);
          ::waitpid(child, &status, 0);
          CHILD_EXPECT(false, "the forked child hung destroying its copy of the group");
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      CHILD_EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status ", status);
    }
    Tensor t = Tensor::full({3000}, rank + 1.0);
    pg->all_reduce(t, {.op = ReduceOp::SUM})->wait();
    CHILD_EXPECT(t.to_vector<float>()[2999] == 3.0f);
  });
  expect_all_ok(results);
}

TEST(ShmFault, BadArgumentsAreValueErrors) {
  auto results = run_ranks(2, [&](int rank, Store& store) {
    auto pg = make_group(store, rank, 2, std::chrono::seconds(60));
    Tensor t = Tensor::ones({4});
    expect_throws<ValueError>([&] { pg->broadcast(t, {.root = 2}); }, {"broadcast", "root 2"});
    std::vector<Tensor> outs = {Tensor::ones({4})};
    expect_throws<ValueError>([&] { pg->all_gather(outs, t); }, {"all_gather", "expected 2"});
    std::vector<Tensor> wrong = {Tensor::ones({4}), Tensor::ones({4}, DType::INT64)};
    expect_throws<ValueError>([&] { pg->all_gather(wrong, t); }, {"dtype int64"});
    expect_throws<ValueError>([&] { pg->send(t, 5, {.tag = 0}); }, {"send", "dst 5"});
    pg->barrier()->wait();  // nothing was issued by the bad calls
  });
  expect_all_ok(results);
}

}  // namespace
}  // namespace crew::dist
