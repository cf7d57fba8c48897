// Hang and desync detection on real multi-process jobs (gloo and shm): ranks that call
// different collectives, a rank that stops calling, a rank that dies, mismatched sizes under
// CREW_DIST_DEBUG=DETAIL, and ranks with different numbers of batches (the seed's plain
// BatchSampler mistake). Each ends in an error whose report names the ranks, within seconds.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <functional>
#include <thread>

#include "crew/core/timer.h"
#include "crew/distributed/collective/collective.h"
#include "crew/distributed/debug/debug_process_group.h"
#include "crew/distributed/parallel/parallel.h"
#include "crew/distributed/store/store.h"
#include "crew/io/batch_sampler.h"
#include "crew/io/dataset.h"
#include "tests/distributed/hang_job_util.h"
#include "tests/testing/child_expect.h"

namespace crew::dist {
namespace {

using testing::error_of;
using testing::expect_contains;
using testing_hang::HangJobOptions;
using testing_hang::run_hang_job;
using testing_hang::show;

class HangFault : public ::testing::TestWithParam<std::string> {
 protected:
  HangJobOptions job(std::vector<std::pair<std::string, std::string>> env = {}) const {
    HangJobOptions o;
    o.backend = GetParam();
    o.env = std::move(env);
    return o;
  }
};
class DesyncFault : public HangFault {};

TEST_P(HangFault, RankThatStopsCallingIsNamedWhenTheCollectiveTimesOut) {
  auto results = run_hang_job(
      2,
      [](int rank) {
        init_parallel_env();
        Tensor t = Tensor::ones({4096});
        for (int i = 0; i < 3; ++i) all_reduce(t);
        auto store = global_store();
        if (rank == 1) {  // stops calling: waits (bounded) until rank 0 has its error
          store->wait({"rank0_done"}, std::chrono::seconds(30));
          return;
        }
        const std::string error = error_of<TimeoutError>([&] { all_reduce(t); });
        store->set("rank0_done", "1");
        CHILD_EXPECT(!error.empty(), "expected a TimeoutError");
        show(rank, error);
        expect_contains(error, "all_reduce (rank 0, seq 3, group default): timed out after");
        expect_contains(error, "rank 0 is in all_reduce #3 (4096 floats, SUM)");
        expect_contains(error,
                        "rank 1 is not in a collective (its last: all_reduce #2 (4096 floats, SUM), done)");
        expect_contains(error, "behind: rank 1 has not issued #3 (others wait in #3)");
      },
      job());
  testing::expect_all_ok(results);
}

TEST_P(HangFault, WatchdogReportsAStallAndTheOpStillCompletes) {
  auto results = run_hang_job(
      2,
      [](int rank) {
        init_parallel_env();
        auto store = global_store();
        Tensor t = Tensor::full({16}, rank + 1.0);
        if (rank == 1) {  // joins only after rank 0's watchdog has reported the stall
          store->wait({"reported"}, std::chrono::seconds(30));
          all_reduce(t);
          CHILD_EXPECT(t.to_vector<float>()[0] == 3.0f, "sum of 1 and 2");
          return;
        }
        auto work = all_reduce(t, ReduceOp::SUM, nullptr, /*sync_op=*/false);
        auto* pg = dynamic_cast<DebugProcessGroup*>(default_group()->process_group());
        CHILD_EXPECT(pg != nullptr, "the default group is wrapped");
        Deadline deadline(std::chrono::seconds(20));
        while (pg->hang_reports().empty() && !deadline.expired()) {
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        store->set("reported", "1");
        CHILD_EXPECT(!pg->hang_reports().empty(), "the watchdog reported nothing within 20 s");
        const std::string report = pg->hang_reports().front();
        show(rank, report);
        expect_contains(report, "(CREW_HANG_TIMEOUT 1 s)");
        expect_contains(report, "rank 0 is in all_reduce #0 (16 floats, SUM)");
        expect_contains(report, "rank 1 is not in a collective (its last: none)");
        expect_contains(report, "behind: rank 1 has not issued #0");
        work->wait();
        CHILD_EXPECT(t.to_vector<float>()[0] == 3.0f, "sum of 1 and 2");
      },
      [&] {
        auto o = job({{"CREW_HANG_TIMEOUT", "1s"}});
        o.timeout = "30s";
        return o;
      }());
  testing::expect_all_ok(results);
}

// CREW_HANG_ACTION=abort: after logging the report the watchdog ends the stalled rank with
// kHangExitCode (the launcher then stops and restarts the group), instead of the job waiting
// out CREW_TIMEOUT (here 30 s).
TEST(HangAbortFault, WatchdogEndsTheStalledRankWhenAsked) {
  HangJobOptions o;
  o.timeout = "30s";
  o.env = {{"CREW_HANG_TIMEOUT", "1s"}, {"CREW_HANG_ACTION", "abort"}};
  auto results = run_hang_job(
      2,
      [](int rank) {
        init_parallel_env();
        auto store = global_store();
        if (rank == 0) store->set("pid0", std::to_string(::getpid()));
        Tensor t = Tensor::ones({64});
        all_reduce(t);
        if (rank == 1) {  // stops calling until rank 0 is gone (at most 20 s), then leaves
          const pid_t pid0 = static_cast<pid_t>(std::stol(store->get_string("pid0")));
          Deadline deadline(std::chrono::seconds(20));
          while (::kill(pid0, 0) == 0 && !deadline.expired()) {
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
          }
          ::_exit(0);
        }
        all_reduce(t);  // stalls: rank 1 never joins; the watchdog ends this process
        throw std::runtime_error("the stalled all_reduce returned");
      },
      o);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].exit_code, DebugOptions::kHangExitCode) << testing::describe(results[0]);
  EXPECT_FALSE(results[0].timed_out);
  EXPECT_TRUE(results[1].ok()) << testing::describe(results[1]);
}

TEST(HangAbortFault, BadActionIsAValueErrorNamingIt) {
  ::setenv("CREW_HANG_ACTION", "explode", 1);
  try {
    DebugOptions::from_env();
    ADD_FAILURE() << "expected a ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("CREW_HANG_ACTION: expected log or abort, got 'explode'"),
              std::string::npos)
        << e.what();
  }
  ::unsetenv("CREW_HANG_ACTION");
}

TEST_P(HangFault, DeadRankSendsNoReport) {
  auto results = run_hang_job(
      2,
      [](int rank) {
        init_parallel_env();
        Tensor t = Tensor::ones({1024});
        for (int i = 0; i < 2; ++i) all_reduce(t);
        if (rank == 1) ::_exit(0);  // dies: no destructor, no goodbye in the store
        const std::string error = error_of<TimeoutError, CommError>([&] { all_reduce(t); });
        CHILD_EXPECT(!error.empty(), "expected TimeoutError or CommError");
        show(rank, error);
        expect_contains(error, "all_reduce (rank 0, seq 2, group default)");
        expect_contains(error, "rank 0 is in all_reduce #2 (1024 floats, SUM)");
        expect_contains(error, "rank 1: no report (dead or stuck outside a collective)");
      },
      job());
  testing::expect_all_ok(results);
}

TEST_P(DesyncFault, DifferentCollectivesAreNamedAtOnceUnderDetail) {
  auto results = run_hang_job(
      2,
      [](int rank) {
        init_parallel_env();
        Tensor t = Tensor::ones({4096});
        all_reduce(t);
        all_reduce(t);
        const std::string error = error_of<DesyncError>([&] {
          if (rank == 0)
            broadcast(t, 0);
          else
            all_reduce(t);
        });
        CHILD_EXPECT(!error.empty(), "expected a DesyncError");
        show(rank, error);
        expect_contains(error, "the ranks disagree on this collective (CREW_DIST_DEBUG=DETAIL)");
        expect_contains(error, "rank 0 is in broadcast #2 (4096 floats, root 0)");
        expect_contains(error, "rank 1 is in all_reduce #2 (4096 floats, SUM)");
        expect_contains(error, "desync: ranks issued different collectives as #2");
      },
      job({{"CREW_DIST_DEBUG", "DETAIL"}}));
  testing::expect_all_ok(results);
}

// Without DETAIL the backends do not check what the peers run: the mismatched pair fails or
// hangs in the backend (which depends on the backend), and that failure carries the report.
TEST_P(DesyncFault, DifferentCollectivesWithoutDetailAreNamedWhenTheyFail) {
  auto results = run_hang_job(
      2,
      [](int rank) {
        init_parallel_env();
        Tensor t = Tensor::ones({4096});
        all_reduce(t);
        const std::string error = error_of<CommError, TimeoutError>([&] {
          if (rank == 0)
            broadcast(t, 0);
          else
            all_reduce(t);
          barrier();
        });
        CHILD_EXPECT(!error.empty(), "expected the mismatched collectives to fail");
        show(rank, error);
        expect_contains(error,
                        "desync: ranks issued different collectives as #1: rank 0 broadcast #1 (4096 floats, "
                        "root 0), rank 1 all_reduce #1 (4096 floats, SUM)");
      },
      job());
  testing::expect_all_ok(results);
}

TEST_P(DesyncFault, MismatchedSizesAndDtypesUnderDetailThenTheGroupStillWorks) {
  auto results = run_hang_job(
      2,
      [](int rank) {
        // DETAIL through the option field (InitOptions::debug) rather than CREW_DIST_DEBUG.
        InitOptions options;
        options.debug = DebugOptions{};
        options.debug->detail = true;
        init_parallel_env(options);
        Tensor t = Tensor::ones({rank == 0 ? 4096 : 4095});
        std::string error = error_of<DesyncError>([&] { all_reduce(t); });
        CHILD_EXPECT(!error.empty(), "expected a DesyncError for the sizes");
        show(rank, error);
        expect_contains(error, "all_reduce (rank " + std::to_string(rank) + ", #0, group default)");
        expect_contains(error, "rank 0 is in all_reduce #0 (4096 floats, SUM)");
        expect_contains(error, "rank 1 is in all_reduce #0 (4095 floats, SUM)");
        Tensor d = Tensor::ones({8}, rank == 0 ? DType::FLOAT32 : DType::FLOAT64);
        std::vector<Tensor> parts;
        error = error_of<DesyncError>([&] { all_gather(parts, d); });
        CHILD_EXPECT(!error.empty(), "expected a DesyncError for the dtypes");
        show(rank, error);
        expect_contains(error,
                        "rank 0 is in all_gather #1 (8 floats); rank 1 is in all_gather #1 (8 doubles)");
        // The check exchanged fingerprints only: the ranks still agree on the next collective.
        Tensor ok = Tensor::full({8}, rank + 1.0);
        all_reduce(ok);
        CHILD_EXPECT(ok.to_vector<float>()[7] == 3.0f, "a matching all_reduce after the desyncs");
      },
      job());
  testing::expect_all_ok(results);
}

// Without DETAIL every backend still checks that the ranks agree on size, dtype and reduction
// (Gloo through its preamble, shm through its descriptors): each mismatch is a DesyncError on
// both ranks naming both calls, never an abort inside Gloo or a silently wrong result.
TEST_P(DesyncFault, MismatchedSizeDtypeOrReductionIsADesyncErrorWithoutDetail) {
  struct Case {
    const char* what;
    std::function<Tensor(int rank)> tensor;
    std::function<ReduceOp(int rank)> op;
    std::string rank0, rank1;  // how the report names each rank's call
  };
  const auto sum = [](int) { return ReduceOp::SUM; };
  const std::vector<Case> cases = {
      {"sizes", [](int r) { return Tensor::ones({r == 0 ? 4 : 8}); }, sum, "all_reduce #0 (4 floats, SUM)",
       "all_reduce #0 (8 floats, SUM)"},
      {"float32 vs float64", [](int r) { return Tensor::ones({4}, r == 0 ? DType::FLOAT32 : DType::FLOAT64); },
       sum, "all_reduce #0 (4 floats, SUM)", "all_reduce #0 (4 doubles, SUM)"},
      {"float32 vs int32", [](int r) { return Tensor::ones({4}, r == 0 ? DType::FLOAT32 : DType::INT32); },
       sum, "all_reduce #0 (4 floats, SUM)", "all_reduce #0 (4 int32s, SUM)"},
      {"SUM vs MAX", [](int) { return Tensor::ones({4}); },
       [](int r) { return r == 0 ? ReduceOp::SUM : ReduceOp::MAX; }, "all_reduce #0 (4 floats, SUM)",
       "all_reduce #0 (4 floats, MAX)"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    HangJobOptions o = job();
    o.deadline = std::chrono::seconds(30);  // each case ends within seconds, never by a hang
    auto results = run_hang_job(
        2,
        [&c](int rank) {
          init_parallel_env();
          Tensor t = c.tensor(rank);
          const std::string error = error_of<DesyncError>([&] { all_reduce(t, c.op(rank)); });
          CHILD_EXPECT(!error.empty(), "expected a DesyncError");
          show(rank, error);
          expect_contains(error, "desync: ranks issued different collectives as #0: rank 0 " + c.rank0 +
                                     ", rank 1 " + c.rank1);
        },
        o);
    testing::expect_all_ok(results);
  }
}

// After Gloo's DesyncError the group goes on (no data moved), and a later failure's report
// reads the ranks live again: not the desync's report, not "rank 1 failed in #0".
TEST(GlooDesyncFault, GroupGoesOnAfterADesyncAndLaterReportsAreFresh) {
  auto results = run_hang_job(
      2,
      [](int rank) {
        init_parallel_env();
        Tensor t = Tensor::ones({rank == 0 ? 4 : 8});
        CHILD_EXPECT(!error_of<DesyncError>([&] { all_reduce(t); }).empty(), "expected a DesyncError");
        Tensor ok = Tensor::full({4}, rank + 1.0);
        all_reduce(ok);
        CHILD_EXPECT(ok.to_vector<float>()[0] == 3.0f, "a matching all_reduce after the desync");
        if (rank == 1) {
          std::this_thread::sleep_for(std::chrono::seconds(6));  // alive, not in a collective
          return;
        }
        const std::string error = error_of<TimeoutError>([&] { all_reduce(ok); });
        CHILD_EXPECT(!error.empty(), "expected a TimeoutError");
        show(rank, error);
        expect_contains(error, "rank 1 is not in a collective (its last: all_reduce #1 (4 floats, SUM), done)");
        CHILD_EXPECT(error.find("report of the first failure") == std::string::npos, "stale report: ", error);
        CHILD_EXPECT(error.find("rank 1 failed in") == std::string::npos, "stale final state: ", error);
      },
      HangJobOptions{});
  testing::expect_all_ok(results);
}

// Groups from new_group are checked too; their reports use group ranks and the group's name.
TEST_P(DesyncFault, SubgroupDesyncNamesTheGroupAndItsRanks) {
  auto results = run_hang_job(
      3,
      [](int rank) {
        init_parallel_env();
        auto pair = new_group({1, 2});
        if (!pair->is_member()) return;
        Tensor t = Tensor::ones({rank == 1 ? 10 : 12});
        const std::string error = error_of<DesyncError>([&] { all_reduce(t, ReduceOp::MAX, pair.get()); });
        CHILD_EXPECT(!error.empty(), "expected a DesyncError");
        show(rank, error);
        expect_contains(error,
                        "collectives of group group1 (gathered by rank " + std::to_string(rank - 1) + ")");
        expect_contains(
            error,
            "rank 0 is in all_reduce #0 (10 floats, MAX); rank 1 is in all_reduce #0 (12 floats, MAX)");
      },
      job({{"CREW_DIST_DEBUG", "DETAIL"}}));
  testing::expect_all_ok(results);
}

// The seed's mistake: each rank iterates its own data with a plain BatchSampler, so the ranks
// run different numbers of batches; the one with fewer finishes and leaves, and the other's
// next all_reduce fails with a report naming it.
TEST_P(DesyncFault, PlainBatchSamplerRankThatFinishesEarlyIsNamed) {
  auto results = run_hang_job(
      2,
      [](int rank) {
        init_parallel_env();
        // Rank 0 holds 10 samples (3 batches of up to 4), rank 1 holds 14 (4 batches).
        io::TensorDataset data({Tensor::arange(rank == 0 ? 10 : 14, DType::FLOAT32)});
        io::BatchSampler sampler(data, /*batch_size=*/4);
        const std::string error = error_of<TimeoutError, CommError>([&] {
          for (const auto& batch : sampler.batches()) {
            Tensor loss = Tensor::scalar(static_cast<double>(batch.size()));
            all_reduce(loss, ReduceOp::AVG);  // e.g. the mean loss to print
          }
        });
        if (rank == 0) {
          CHILD_EXPECT(error.empty(), "rank 0 runs its 3 batches: ", error);
          destroy_process_group();  // done: leaves the group, as at the end of a program
          return;
        }
        CHILD_EXPECT(!error.empty(), "rank 1's 4th all_reduce must fail");
        show(rank, error);
        expect_contains(error, "all_reduce (rank 1, seq 3, group default)");
        expect_contains(error, "rank 0 has left the group (its last: all_reduce #2 (1 float, AVG), done)");
        expect_contains(error, "rank 1 is in all_reduce #3 (1 float, AVG)");
        expect_contains(error, "behind: rank 0 left the group without issuing #3 (others wait in #3)");
      },
      job());
  testing::expect_all_ok(results);
}

std::vector<std::string> backends() {
  std::vector<std::string> b = {"gloo"};
  // The shm backend is optional in a build; init_parallel_env registers it when present.
#if __has_include("crew/distributed/backends/shm/shm_process_group.h")
  b.push_back("shm");
#endif
  return b;
}

INSTANTIATE_TEST_SUITE_P(Backends, HangFault, ::testing::ValuesIn(backends()),
                         [](const auto& info) { return info.param; });
INSTANTIATE_TEST_SUITE_P(Backends, DesyncFault, ::testing::ValuesIn(backends()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace crew::dist
