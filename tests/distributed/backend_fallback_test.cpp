// Choosing and falling back between backends as real jobs: init_parallel_env picks hier for
// 2 simulated hosts x 2 ranks (CREW_HOST_ID); and a rank that cannot get its shared memory
// (CREW_SHM_MAX_BYTES below the segment size, as a too small /dev/shm) makes every rank
// fail alike, or, when the backend was chosen automatically, every rank fall back to Gloo
// with one warning from rank 0.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "crew/distributed/backends/backend_unavailable.h"
#include "crew/distributed/backends/shm/shm_process_group.h"
#include "crew/distributed/collective/collective.h"
#include "crew/distributed/parallel/parallel.h"
#include "tests/distributed/hosted_job.h"
#include "tests/distributed/shm_harness.h"
#include "tests/testing/child_expect.h"
#include "tests/testing/store_ptr.h"
#include "tests/testing/text.h"

namespace crew::dist {
namespace {

using testing::expect_all_ok;
using testing::expect_throws;

// Forks `world` ranks of one job against a store served here; CREW_BACKEND=backend.
std::vector<testing::RankResult> run_job(int world, const std::string& backend,
                                         const std::function<void(int)>& fn) {
  testing_job::HostedJobOptions o;
  o.backend = backend;
  o.env = {{"CREW_JOB_ID", "fallback" + std::to_string(::getpid())}};
  o.deadline = std::chrono::seconds(90);
  return testing_job::run_hosted_job(world, fn, o);
}

// Sends this process's stderr to a file; text() reads what was written so far.
class StderrCapture {
 public:
  StderrCapture() : path_("/tmp/crew-fallback-stderr-" + std::to_string(::getpid())) {
    const int fd = ::open(path_.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0600);
    ::dup2(fd, STDERR_FILENO);
    ::close(fd);
  }
  ~StderrCapture() { ::unlink(path_.c_str()); }
  std::string text() const { return testing::read_file(path_); }

 private:
  std::string path_;
};

void simulate_hosts(int rank, int per_host) {
  ::setenv("CREW_HOST_ID", ("simhost" + std::to_string(rank / per_host)).c_str(), 1);
}

void check_sum(int rank, int world) {
  Tensor t = Tensor::full({1001}, rank + 1.0);
  all_reduce(t, ReduceOp::SUM);
  CHILD_EXPECT(t.to_vector<float>() == std::vector<float>(1001, world * (world + 1) / 2.0f), t);
}

// A job of `world` ranks on simulated hosts of `per_host`, CREW_BACKEND=requested and
// CREW_SHM_MAX_BYTES=4096 in rank short_rank (if any): every rank's default group has
// backend `expected`, and a sum over it is right.
void expect_job_backend(int world, int per_host, const std::string& requested, const std::string& expected,
                        int short_rank = -1) {
  auto results = run_job(world, requested, [&](int rank) {
    simulate_hosts(rank, per_host);
    if (rank == short_rank) ::setenv("CREW_SHM_MAX_BYTES", "4096", 1);
    auto group = init_parallel_env();
    CHILD_EXPECT(group->backend() == expected, group->backend());
    check_sum(rank, world);
    destroy_process_group();
  });
  expect_all_ok(results);
}

TEST(BackendChoice, AutoPicksHierOnTwoHostsOfTwoAndGlooWithALoneRank) {
  auto results = run_job(4, "auto", [](int rank) {
    simulate_hosts(rank, 2);
    auto group = init_parallel_env();
    CHILD_EXPECT(group->backend() == "hier", group->backend());
    check_sum(rank, 4);
    Tensor avg = Tensor::full({3}, rank * 4.0);
    all_reduce(avg, ReduceOp::AVG);
    CHILD_EXPECT(avg.to_vector<float>() == std::vector<float>(3, 6.0f), avg);
    auto sub = new_group({0, 1, 2, 3});
    CHILD_EXPECT(sub->backend() == "hier", sub->backend());
    destroy_process_group();
  });
  expect_all_ok(results);
  expect_job_backend(4, 3, "auto", "gloo");  // hosts of 3 and 1 ranks
  expect_job_backend(4, 3, "hier", "hier");  // forced: works with a lone rank too
}

// The backend alone: rank 0 creates the segment, rank 1 may not map it; both throw
// BackendUnavailableError naming rank 1 and both sizes, and nothing is left in /dev/shm.
TEST(ShmFallbackFault, OneRankThatCannotMapFailsEveryRankAlike) {
  const std::string prefix = testing::shm::set_unique_job("fallbackvote");
  ShmOptions defaults;
  const size_t need = shm_segment_bytes(2, defaults);
  auto results = testing::shm::run_ranks(2, [&](int rank, Store& store) {
    ShmOptions shm;
    if (rank == 1) shm.max_bytes = 4096;
    expect_throws<BackendUnavailableError>(
        [&] {
          create_shm_process_group(testing::borrow_store(store), rank, 2,
                                   ProcessGroupOptions{std::chrono::seconds(30), "default"}, shm);
        },
        {"shm rendezvous (rank " + std::to_string(rank), "rank 1 could not map",
         "need " + std::to_string(need) + " bytes", "4096 available"});
  });
  expect_all_ok(results);
  EXPECT_TRUE(testing::shm::shm_entries(prefix).empty());
}

TEST(ShmFallbackFault, AutoFallsBackToGlooOnEveryRankAndRankZeroWarns) {
  auto results = run_job(2, "auto", [](int rank) {
    StderrCapture capture;
    if (rank == 1) ::setenv("CREW_SHM_MAX_BYTES", "4096", 1);
    auto group = init_parallel_env();
    CHILD_EXPECT(group->backend() == "gloo", group->backend());
    check_sum(rank, 2);
    auto sub = new_group({0, 1});  // the default's backend after the fallback
    CHILD_EXPECT(sub->backend() == "gloo", sub->backend());
    destroy_process_group();
    const std::string log = capture.text();
    const bool warned = log.find("falls back from backend shm to gloo on every rank") != std::string::npos;
    CHILD_EXPECT(warned == (rank == 0), "rank ", rank, " log: ", log);
    if (rank == 0) CHILD_EXPECT(log.find("rank 1 could not map") != std::string::npos, log);
  });
  expect_all_ok(results);
}

TEST(ShmFallbackFault, ForcedShmGivesTheErrorOnEveryRank) {
  auto results = run_job(2, "shm", [](int rank) {
    if (rank == 0) ::setenv("CREW_SHM_MAX_BYTES", "4096", 1);
    expect_throws<BackendUnavailableError>(
        [] { init_parallel_env(); },
        {"rank 0 could not create", "too small for the shared-memory buffers: need ", "4096 available"});
  });
  expect_all_ok(results);
}

// One rank of one host lacks the memory: the hier group agrees across both hosts, and all
// four ranks fall back to Gloo.
TEST(ShmFallbackFault, AutoHierFallsBackToGlooWhenOneHostLacksSharedMemory) {
  expect_job_backend(4, 2, "auto", "gloo", /*short_rank=*/3);
  auto results = run_job(4, "hier", [](int rank) {
    simulate_hosts(rank, 2);
    if (rank == 3) ::setenv("CREW_SHM_MAX_BYTES", "4096", 1);
    expect_throws<BackendUnavailableError>(
        [] { init_parallel_env(); },
        {"host 1 (rank 2) could not set up its shared-memory group", "rank 1 could not map"});
  });
  expect_all_ok(results);
}

}  // namespace
}  // namespace crew::dist
