// init_parallel_env, groups and the free collectives as real multi-process jobs on
// 127.0.0.1; plus the world-of-one and before-init behaviour, in this process.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <functional>

#include "crew/distributed/collective/collective.h"
#include "crew/distributed/parallel/parallel.h"
#include "tests/distributed/hosted_job.h"
#include "tests/testing/child_expect.h"
#include "tests/testing/multiprocess.h"

namespace crew::dist {
namespace {

using ::testing::HasSubstr;

const char* const kParallelVars[] = {"CREW_RANK",
                                     "CREW_WORLD_SIZE",
                                     "CREW_MASTER",
                                     "CREW_STORE_HOSTED",
                                     "CREW_BACKEND",
                                     "PADDLE_TRAINER_ID",
                                     "PADDLE_TRAINERS_NUM",
                                     "PADDLE_MASTER",
                                     "RANK",
                                     "WORLD_SIZE",
                                     "MASTER_ADDR",
                                     "MASTER_PORT",
                                     "OMPI_COMM_WORLD_RANK",
                                     "SLURM_PROCID",
                                     "CREW_RESTART_COUNT"};

void clear_parallel_env() {
  for (const char* v : kParallelVars) ::unsetenv(v);
}

using testing_job::HostedJobOptions;

// The options of the jobs here: a 20 s collective timeout.
HostedJobOptions job_options() {
  HostedJobOptions o;
  o.timeout = "20s";
  return o;
}

// Forks `world` ranks with the launcher's environment (run_ranks kills them at the deadline).
std::vector<testing::RankResult> run_job(int world, const std::function<void(int)>& fn,
                                         const HostedJobOptions& opt = job_options()) {
  return testing_job::run_hosted_job(world, fn, opt);
}

using testing::expect_all_ok;

TEST(ParallelInit, BeforeInitEveryEntryPointThrowsTheExactStateError) {
  clear_parallel_env();
  destroy_process_group();
  EXPECT_FALSE(is_initialized());
  Tensor t = Tensor::ones({2});
  const std::string expected =
      "Call crew::dist::init_parallel_env first to initialize the distributed environment.";
  auto expect_state_error = [&](const std::function<void()>& call) {
    try {
      call();
      ADD_FAILURE() << "expected StateError";
    } catch (const StateError& e) {
      EXPECT_EQ(e.what(), expected);
    }
  };
  expect_state_error([&] { all_reduce(t); });
  expect_state_error([&] { barrier(); });
  expect_state_error([&] { new_group({0}); });
  expect_state_error([&] { default_group(); });
  EXPECT_EQ(get_rank(), 0);
  EXPECT_EQ(get_world_size(), 1);
}

TEST(ParallelInit, WorldOfOneWarnsStaysUninitializedAndStillWorks) {
  clear_parallel_env();
  ::testing::internal::CaptureStderr();
  auto group = init_parallel_env();
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(
      err,
      HasSubstr("Currently not a parallel execution environment, init_parallel_env will not do anything."));
  EXPECT_EQ(group, nullptr);
  EXPECT_FALSE(is_initialized());
  Tensor t = Tensor::from_vector<float>({1, 2});
  all_reduce(t, ReduceOp::SUM);
  EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{1, 2}));
  std::vector<Tensor> parts;
  all_gather(parts, t);
  ASSERT_EQ(parts.size(), 1u);
  EXPECT_EQ(parts[0].to_vector<float>(), (std::vector<float>{1, 2}));
  destroy_process_group();
}

TEST(ParallelInit, ThreeRanksInitGroupsAndCollectives) {
  auto results = run_job(3, [](int rank) {
    CHILD_EXPECT(!is_initialized(), "before");
    auto group = init_parallel_env();
    CHILD_EXPECT(group != nullptr && is_initialized(), "after");
    CHILD_EXPECT(init_parallel_env() == group, "second call returns the same group");
    CHILD_EXPECT(get_rank() == rank && get_world_size() == 3, get_rank(), " ", get_world_size());
    CHILD_EXPECT(group->id() == 0 && group->name() == "_default_pg" && group->backend() == "gloo",
                 group->name());
    CHILD_EXPECT(group->ranks() == (std::vector<int>{0, 1, 2}), "ranks");

    Tensor t = Tensor::full({5}, rank + 1.0);
    all_reduce(t);
    CHILD_EXPECT(t.to_vector<float>() == std::vector<float>(5, 6.0f), t);
    Tensor b = Tensor::full({2}, rank, DType::INT64);
    broadcast(b, 2);
    CHILD_EXPECT(b.to_vector<int64_t>() == std::vector<int64_t>(2, 2), b);

    auto evens = new_group({2, 0});
    CHILD_EXPECT(evens->id() == 1 && evens->ranks() == (std::vector<int>{0, 2}), "sorted ranks");
    if (rank == 1) {
      CHILD_EXPECT(!evens->is_member() && evens->rank() == -1 && evens->world_size() == -1, "non-member");
      CHILD_EXPECT(evens->process_group() == nullptr, "no pg");
      Tensor x = Tensor::ones({1});
      CHILD_EXPECT(all_reduce(x, ReduceOp::SUM, evens.get())->is_completed(), "no-op");
      CHILD_EXPECT(x.item() == 1.0, x);
    } else {
      CHILD_EXPECT(evens->rank() == rank / 2 && evens->world_size() == 2, evens->rank());
      CHILD_EXPECT(get_rank(evens.get()) == rank / 2, "group rank");
      Tensor x = Tensor::full({3}, rank + 10.0);
      all_reduce(x, ReduceOp::MAX, evens.get());
      CHILD_EXPECT(x.to_vector<float>() == std::vector<float>(3, 12.0f), x);
      Tensor y = Tensor::full({1}, rank);
      broadcast(y, 2, evens.get());  // src is a global rank
      CHILD_EXPECT(y.item() == 2.0, y);
    }
    // The default group still lines up after the subgroup's traffic.
    barrier();
    std::vector<Tensor> all;
    all_gather(all, Tensor::full({1}, rank * 3.0));
    CHILD_EXPECT(all.size() == 3 && all[2].item() == 6.0, "all_gather");
    destroy_process_group();
    CHILD_EXPECT(!is_initialized(), "destroyed");
  });
  expect_all_ok(results);
}

TEST(ParallelInit, RankZeroHostsTheStoreAndReinitWorks) {
  HostedJobOptions opt = job_options();
  opt.host_store = false;
  auto results = run_job(
      2,
      [](int rank) {
        init_parallel_env();
        Tensor t = Tensor::full({1}, rank + 1.0);
        all_reduce(t, ReduceOp::PROD);
        CHILD_EXPECT(t.item() == 2.0, t);
        destroy_process_group();
        // A second generation: fresh keys, same store address.
        init_parallel_env();
        Tensor u = Tensor::full({1}, rank + 1.0);
        all_reduce(u, ReduceOp::AVG);
        CHILD_EXPECT(u.item() == 1.5, u);
        destroy_process_group();
      },
      opt);
  expect_all_ok(results);
}

TEST(ParallelInit, AutoBackendPicksShmOnOneHostAndExplicitChoicesAreChecked) {
  HostedJobOptions opt = job_options();
  opt.backend = "auto";
  auto results = run_job(
      2,
      [](int rank) {
        auto group = init_parallel_env();
        const std::string expected = is_backend_registered("shm") ? "shm" : "gloo";
        CHILD_EXPECT(group->backend() == expected, group->backend());
        Tensor t = Tensor::full({3}, rank + 1.0);
        all_reduce(t);
        CHILD_EXPECT(t.to_vector<float>() == std::vector<float>(3, 3.0f), t);
        auto gloo_pair = new_group({0, 1}, "gloo");
        CHILD_EXPECT(gloo_pair->backend() == "gloo", gloo_pair->backend());
        destroy_process_group();
      },
      opt);
  expect_all_ok(results);

  opt.backend = "mpi";
  results = run_job(
      1 + 1,
      [](int) {
        testing::expect_throws<ValueError>([] { init_parallel_env(); }, {"backend 'mpi' is not available"});
      },
      opt);
  expect_all_ok(results);

  // nccl is always registered; a program without its driver (or a CPU job) says why on every rank.
  opt.backend = "nccl";
  results = run_job(
      1 + 1,
      [](int) { testing::expect_throws<Error>([] { init_parallel_env(); }, {"backend nccl (rank"}); }, opt);
  expect_all_ok(results);
}

TEST(ParallelInit, KilledPeerGivesCommErrorOrTimeoutNotAHang) {
  HostedJobOptions opt = job_options();
  opt.timeout = "3s";
  auto results = run_job(
      2,
      [](int rank) {
        init_parallel_env();
        Tensor t = Tensor::ones({1 << 10});
        all_reduce(t);
        if (rank == 1) ::raise(SIGKILL);
        try {
          for (int i = 0; i < 3; ++i) all_reduce(t);
        } catch (const CommError& e) {
          CHILD_EXPECT(std::string(e.what()).find("all_reduce (rank 0, seq ") != std::string::npos, e.what());
          CHILD_EXPECT(std::string(e.what()).find("group default") != std::string::npos, e.what());
          return;
        } catch (const TimeoutError& e) {
          CHILD_EXPECT(std::string(e.what()).find("all_reduce (rank 0, seq ") != std::string::npos, e.what());
          return;
        }
        throw std::runtime_error("expected CommError or TimeoutError after the peer was killed");
      },
      opt);
  EXPECT_TRUE(results[0].ok()) << testing::describe(results[0]);
  EXPECT_EQ(results[1].signal, SIGKILL) << testing::describe(results[1]);
}

TEST(ParallelInit, ExitWithoutDestroyShutsDownCleanly) {
  auto results = run_job(3, [](int rank) {
    init_parallel_env();
    Tensor t = Tensor::ones({4});
    all_reduce(t, ReduceOp::SUM, nullptr, /*sync_op=*/false)->wait();
    new_group({0, 1});
    // No destroy_process_group: the static teardown at exit must not hang or crash.
    std::exit(0);
  });
  expect_all_ok(results);
}

TEST(ParallelInit, FreeCollectivesTranslateGlobalRanksOnSubgroups) {
  auto results = run_job(4, [](int rank) {
    init_parallel_env();
    auto odd = new_group({1, 3});
    auto most = new_group({0, 1, 3});
    if (most->is_member()) {
      const int gr = most->rank();  // 0, 1, 2 for global 0, 1, 3
      Tensor t = Tensor::full({2}, rank + 1.0, DType::INT32);
      reduce(t, 3, ReduceOp::SUM, most.get());
      if (rank == 3) CHILD_EXPECT(t.to_vector<int32_t>() == std::vector<int32_t>(2, 1 + 2 + 4), t);
      std::vector<Tensor> gathered;
      gather(Tensor::full({1}, rank * 10.0), gathered, 1, most.get());
      if (rank == 1) {
        CHILD_EXPECT(gathered.size() == 3 && gathered[2].item() == 30.0, "gather");
      }
      std::vector<Tensor> parts;
      for (int i = 0; i < 3; ++i) parts.push_back(Tensor::full({2}, 100.0 * rank + i));
      Tensor mine = Tensor::empty({2});
      scatter(mine, parts, 3, most.get());
      CHILD_EXPECT(mine.to_vector<float>()[0] == 300.0f + gr, mine);
      Tensor rs = Tensor::empty({2});
      reduce_scatter(rs, parts, ReduceOp::SUM, most.get());
      CHILD_EXPECT(rs.to_vector<float>()[0] == 100.0f * (0 + 1 + 3) + 3 * gr, rs);
      std::vector<Tensor> received;
      alltoall(parts, received, most.get());
      CHILD_EXPECT(received.size() == 3 && received[2].to_vector<float>()[0] == 300.0f + gr, "alltoall");
    }
    if (odd->is_member()) {
      Tensor x = Tensor::full({4}, rank, DType::INT64);
      if (rank == 1) {
        send(x, 3, odd.get());
        recv(x, 3, odd.get());
        CHILD_EXPECT(x.to_vector<int64_t>() == std::vector<int64_t>(4, 6), x);
      } else {
        auto work = irecv(x, 1, odd.get());
        work->wait();
        Tensor twice = Tensor::full({4}, 2.0 * x.to_vector<double>()[0] + 4, DType::INT64);
        isend(twice, 1, odd.get())->wait();
      }
    }
    try {
      Tensor t = Tensor::ones({1});
      broadcast(t, 2, odd.get());
      CHILD_EXPECT(!odd->is_member(), "src 2 is not in the odd group");
    } catch (const ValueError& e) {
      CHILD_EXPECT(std::string(e.what()).find("src 2 is not a member of the group") != std::string::npos,
                   e.what());
    }
    barrier();
    destroy_process_group();
  });
  expect_all_ok(results);
}

}  // namespace
}  // namespace crew::dist
