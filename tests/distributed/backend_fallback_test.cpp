// Choosing and falling back between backends as real jobs: init_parallel_env picks hier for
// 2 simulated hosts x 2 ranks (CREW_HOST_ID); and a rank that cannot get its shared memory
// (CREW_SHM_MAX_BYTES below the segment size, as a too small /dev/shm) makes every rank
// fail alike, or, when the backend was chosen automatically, every rank fall back to Gloo
// with one warning from rank 0.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

#include "crew/distributed/backends/backend_unavailable.h"
#include "crew/distributed/backends/shm/shm_process_group.h"
#include "crew/distributed/collective/collective.h"
#include "crew/distributed/parallel/parallel.h"
#include "tests/distributed/hosted_job.h"
#include "tests/distributed/shm_harness.h"

namespace crew::dist {
namespace {

#define CHILD_EXPECT(cond, ...)                                                      \
  do {                                                                               \
    if (!(cond)) throw std::runtime_error(str_cat(#cond, " failed: ", __VA_ARGS__)); \
  } while (0)

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
  std::string text() const {
    std::ifstream in(path_);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }

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
  testing::expect_all_ok(results);
  results = run_job(4, "auto", [](int rank) {
    simulate_hosts(rank, 3);  // hosts of 3 and 1 ranks
    auto group = init_parallel_env();
    CHILD_EXPECT(group->backend() == "gloo", group->backend());
    check_sum(rank, 4);
    destroy_process_group();
  });
  testing::expect_all_ok(results);
  results = run_job(4, "hier", [](int rank) {
    simulate_hosts(rank, 3);  // forced: works with a lone rank too
    auto group = init_parallel_env();
    CHILD_EXPECT(group->backend() == "hier", group->backend());
    check_sum(rank, 4);
    destroy_process_group();
  });
  testing::expect_all_ok(results);
}

// The backend alone: rank 0 creates the segment, rank 1 may not map it; both throw
// BackendUnavailableError naming rank 1 and both sizes, and nothing is left in /dev/shm.
TEST(ShmFallbackFault, OneRankThatCannotMapFailsEveryRankAlike) {
  const std::string job = "fallbackvote" + std::to_string(::getpid());
  ::setenv("CREW_JOB_ID", job.c_str(), 1);
  ShmOptions defaults;
  const size_t need = shm_segment_bytes(2, defaults);
  auto results = testing::shm::run_ranks(2, [&](int rank, Store& store) {
    ShmOptions shm;
    if (rank == 1) shm.max_bytes = 4096;
    std::shared_ptr<Store> borrowed(&store, [](Store*) {});
    try {
      create_shm_process_group(borrowed, rank, 2, ProcessGroupOptions{std::chrono::seconds(30), "default"},
                               shm);
    } catch (const BackendUnavailableError& e) {
      const std::string msg = e.what();
      for (const std::string& part :
           std::vector<std::string>{"shm rendezvous (rank " + std::to_string(rank), "rank 1 could not map",
                                    "need " + std::to_string(need) + " bytes", "4096 available"}) {
        SHM_REQUIRE(msg.find(part) != std::string::npos, "'", msg, "' lacks '", part, "'");
      }
      return;
    }
    SHM_REQUIRE(false, "expected BackendUnavailableError");
  });
  for (const auto& r : results) EXPECT_TRUE(r.ok());
  EXPECT_TRUE(testing::shm::shm_entries(std::string(shm_segment_prefix()) + job).empty());
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
  testing::expect_all_ok(results);
}

TEST(ShmFallbackFault, ForcedShmGivesTheErrorOnEveryRank) {
  auto results = run_job(2, "shm", [](int rank) {
    if (rank == 0) ::setenv("CREW_SHM_MAX_BYTES", "4096", 1);
    try {
      init_parallel_env();
    } catch (const BackendUnavailableError& e) {
      const std::string msg = e.what();
      CHILD_EXPECT(msg.find("rank 0 could not create") != std::string::npos, msg);
      CHILD_EXPECT(msg.find("too small for the shared-memory buffers: need ") != std::string::npos, msg);
      CHILD_EXPECT(msg.find("4096 available") != std::string::npos, msg);
      return;
    }
    throw std::runtime_error("expected BackendUnavailableError");
  });
  testing::expect_all_ok(results);
}

// One rank of one host lacks the memory: the hier group agrees across both hosts, and all
// four ranks fall back to Gloo.
TEST(ShmFallbackFault, AutoHierFallsBackToGlooWhenOneHostLacksSharedMemory) {
  auto results = run_job(4, "auto", [](int rank) {
    simulate_hosts(rank, 2);
    if (rank == 3) ::setenv("CREW_SHM_MAX_BYTES", "4096", 1);
    auto group = init_parallel_env();
    CHILD_EXPECT(group->backend() == "gloo", group->backend());
    check_sum(rank, 4);
    destroy_process_group();
  });
  testing::expect_all_ok(results);
  results = run_job(4, "hier", [](int rank) {
    simulate_hosts(rank, 2);
    if (rank == 3) ::setenv("CREW_SHM_MAX_BYTES", "4096", 1);
    try {
      init_parallel_env();
    } catch (const BackendUnavailableError& e) {
      const std::string msg = e.what();
      CHILD_EXPECT(msg.find("host 1 (rank 2) could not set up its shared-memory group") != std::string::npos,
                   msg);
      CHILD_EXPECT(msg.find("rank 1 could not map") != std::string::npos, msg);
      return;
    }
    throw std::runtime_error("expected BackendUnavailableError");
  });
  testing::expect_all_ok(results);
}

}  // namespace
}  // namespace crew::dist
