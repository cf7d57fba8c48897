// Soak: many mixed-size all_reduce / all_gather calls on 4 ranks (shm and gloo), every result
// checked element by element, and each rank's resident memory (/proc/self/statm) read after a
// warm-up, half-way and at the end: the second half must not grow it (a leak grows it in every
// half; the allocator's arenas of the backend's threads may still settle in the first). The suite runs a
// few hundred calls; the figure of issue 8 is 10,000, run by hand:
//
//   CREW_SOAK_CALLS=10000 build/release/tests/crew_distributed_tests --gtest_filter='SoakFault.*'
//
// Rank 0 prints one "soak:" line per backend (calls, seconds, RSS at start and end).
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "crew/core/check.h"
#include "crew/core/timer.h"
#include "crew/distributed/collective/collective.h"
#include "crew/distributed/parallel/parallel.h"
#include "crew/distributed/store/tcp_store.h"
#include "tests/testing/multiprocess.h"

namespace crew::dist {
namespace {

using namespace std::chrono_literals;

constexpr int kRanks = 4;
// Element counts cycled through: tiny, odd, around the shm slot and gloo chunk sizes, 1 MiB.
const std::vector<int64_t> kSizes = {1, 7, 256, 1000, 4099, 16384, 65537, 262144};
// Growth of resident memory tolerated over the second half (allocator slack, not a leak: a
// leak of one buffer per call would be hundreds of MiB).
constexpr int64_t kRssSlackKiB = 16 * 1024;

int soak_calls() {
  const char* v = std::getenv("CREW_SOAK_CALLS");
  return v ? std::max(20, std::atoi(v)) : 300;
}

int64_t rss_kib() {
  std::ifstream in("/proc/self/statm");
  int64_t size = 0;
  int64_t resident = 0;
  in >> size >> resident;
  return resident * (::sysconf(_SC_PAGESIZE) / 1024);
}

// Small integers, exact in float32, different per rank, call and element.
float value(int rank, int call, int64_t j) {
  return static_cast<float>((rank + 1) * 3 + (j % 5) + (call % 7));
}

void check_all_reduce(int rank, int call, int64_t n) {
  Tensor t = Tensor::empty({n});
  float* p = t.data<float>();
  for (int64_t j = 0; j < n; ++j) p[j] = value(rank, call, j);
  all_reduce(t, ReduceOp::SUM);
  const float* q = t.data<float>();
  for (int64_t j = 0; j < n; ++j) {
    float want = 0;
    for (int r = 0; r < kRanks; ++r) want += value(r, call, j);
    CREW_CHECK(q[j] == want, "all_reduce call ", call, " (", n, " floats), element ", j, ": got ", q[j],
               ", want ", want);
  }
}

void check_all_gather(int rank, int call, int64_t n) {
  Tensor t = Tensor::empty({n});
  float* p = t.data<float>();
  for (int64_t j = 0; j < n; ++j) p[j] = value(rank, call, j);
  std::vector<Tensor> parts;
  all_gather(parts, t);
  CREW_CHECK_EQ(parts.size(), static_cast<size_t>(kRanks));
  for (int r = 0; r < kRanks; ++r) {
    CREW_CHECK_EQ(parts[r].numel(), n);
    const float* q = parts[r].data<float>();
    for (int64_t j = 0; j < n; ++j) {
      CREW_CHECK(q[j] == value(r, call, j), "all_gather call ", call, " (", n, " floats), part ", r,
                 ", element ", j, ": got ", q[j], ", want ", value(r, call, j));
    }
  }
}

void soak(const std::string& backend) {
  TCPStoreServer server({.insecure = true});
  const int calls = soak_calls();
  testing::RunRanksOptions o;
  o.set_rank_env = true;
  o.timeout = std::chrono::milliseconds(90000 + int64_t{calls} * 30);
  o.env = {{"CREW_MASTER", "127.0.0.1:" + std::to_string(server.port())},
           {"CREW_STORE_HOSTED", "1"},
           {"CREW_BACKEND", backend},
           {"CREW_TIMEOUT", "60s"}};
  auto results = testing::run_ranks(
      kRanks,
      [&](int rank, int) {
        auto group = init_parallel_env();
        CREW_CHECK(group && group->backend() == backend, "backend ", group ? group->backend() : "none");
        // Two full cycles of (op, size) before the first reading.
        const int warmup = std::max(4 * static_cast<int>(kSizes.size()), calls / 10);
        const int half = warmup + (calls - warmup) / 2;
        int64_t rss_start = 0;
        int64_t rss_half = 0;
        Stopwatch clock;
        for (int call = 0; call < calls; ++call) {
          if (call == warmup) {
            rss_start = rss_kib();
            clock.reset();
          }
          if (call == half) rss_half = rss_kib();
          const int64_t n = kSizes[static_cast<size_t>(call / 2) % kSizes.size()];
          if (call % 2 == 0) {
            check_all_reduce(rank, call, n);
          } else {
            check_all_gather(rank, call, n);
          }
        }
        const int64_t rss_end = rss_kib();
        if (rank == 0) {
          std::printf(
              "soak: backend %s, %d ranks, %d calls (%d after warm-up) in %.2f s, RSS %lld KiB -> %lld KiB "
              "(half-way) "
              "-> %lld KiB\n",
              backend.c_str(), kRanks, calls, calls - warmup, clock.seconds(),
              static_cast<long long>(rss_start), static_cast<long long>(rss_half),
              static_cast<long long>(rss_end));
          std::fflush(stdout);
        }
        CREW_CHECK(rss_end - rss_half <= kRssSlackKiB, "rank ", rank, ": resident memory grew from ",
                   rss_half, " KiB to ", rss_end, " KiB over the last ", calls - half, " calls (", rss_start,
                   " KiB after warm-up)");
        destroy_process_group();
      },
      o);
  testing::expect_all_ok(results);
}

TEST(SoakFault, ShmMixedSizesStayCorrectAndMemoryFlat) { soak("shm"); }

TEST(SoakFault, GlooMixedSizesStayCorrectAndMemoryFlat) { soak("gloo"); }

}  // namespace
}  // namespace crew::dist
