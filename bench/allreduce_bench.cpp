// all_reduce bandwidth and latency of crew's process groups, plus barrier and
// all_gather_object latency, in the style of nccl-tests:
//   algbw = bytes / time,  busbw = algbw * 2 (n - 1) / n,  time = median over iterations.
//
//   ./allreduce_bench --nproc 2 --backend gloo          # forks 2 ranks on 127.0.0.1
//   crew launch --nproc_per_node 4 ./allreduce_bench    # or run under a launcher (CREW_RANK set)
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "crew/core/env.h"
#include "crew/core/job_token.h"
#include "crew/distributed/distributed.h"
#include "tests/testing/net.h"
#include "tools/cli_checks.h"

namespace dist = crew::dist;
using Clock = std::chrono::steady_clock;

namespace {

struct BenchOptions {
  int nproc = 2;
  std::string backend = "gloo";
  int64_t min_bytes = 4;
  int64_t max_bytes = int64_t{64} << 20;
  int step = 4;             // size multiplier between rows
  int max_iters = 200;      // per size, fewer for big sizes (about 256 MiB of traffic)
  int latency_iters = 200;  // barrier / all_gather_object
  int timeout_s = 600;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

template <typename Fn>
double time_us(Fn&& fn) {
  const auto t0 = Clock::now();
  fn();
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

// Median over iterations of the slowest rank's time (an all_reduce MAX of each rank's times).
double slowest_median(std::vector<double> times) {
  crew::Tensor t = crew::Tensor::from_vector<double>(times);
  dist::all_reduce(t, dist::ReduceOp::MAX);
  return median(t.to_vector<double>());
}

std::string human_bytes(int64_t b) {
  char buf[32];
  if (b >= (1 << 20))
    std::snprintf(buf, sizeof buf, "%lld MiB", static_cast<long long>(b >> 20));
  else if (b >= 1024)
    std::snprintf(buf, sizeof buf, "%lld KiB", static_cast<long long>(b >> 10));
  else
    std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(b));
  return buf;
}

int run_rank(const BenchOptions& opt) {
  dist::InitOptions init;
  init.backend = opt.backend;
  init.timeout = std::chrono::seconds(opt.timeout_s);
  dist::init_parallel_env(init);
  const int rank = dist::get_rank();
  const int n = dist::get_world_size();
  auto group = dist::default_group();
  if (rank == 0) {
    std::printf("# all_reduce (SUM, float32), %d ranks, backend %s\n\n", n, group->backend().c_str());
    std::printf("| size | time (us) | algbw (GB/s) | busbw (GB/s) |\n| ---: | ---: | ---: | ---: |\n");
  }
  for (int64_t bytes = opt.min_bytes; bytes <= opt.max_bytes; bytes *= opt.step) {
    crew::Tensor t = crew::Tensor::ones({bytes / 4});
    const int iters = static_cast<int>(std::clamp<int64_t>((int64_t{256} << 20) / bytes, 5, opt.max_iters));
    for (int w = 0; w < 3; ++w) dist::all_reduce(t);
    std::vector<double> times;
    for (int i = 0; i < iters; ++i) times.push_back(time_us([&] { dist::all_reduce(t); }));
    const double us = slowest_median(times);
    const double algbw = static_cast<double>(bytes) / (us * 1e-6) / 1e9;
    const double busbw = algbw * 2.0 * (n - 1) / n;
    if (rank == 0) std::printf("| %s | %.1f | %.3f | %.3f |\n", human_bytes(bytes).c_str(), us, algbw, busbw);
  }
  std::vector<double> barrier_times;
  for (int i = 0; i < opt.latency_iters; ++i) barrier_times.push_back(time_us([] { dist::barrier(); }));
  const double barrier_us = slowest_median(barrier_times);
  std::vector<double> object_times;
  std::vector<dist::Object> gathered;
  dist::Object obj = dist::Object::dict({{"rank", dist::Object(static_cast<int64_t>(rank))}});
  for (int i = 0; i < opt.latency_iters / 2; ++i) {
    object_times.push_back(time_us([&] { dist::all_gather_object(gathered, obj); }));
  }
  const double object_us = slowest_median(object_times);
  if (rank == 0) {
    std::printf(
        "\n| op | median (us) |\n| --- | ---: |\n| barrier | %.1f |\n| all_gather_object ({'rank': r}) | "
        "%.1f |\n",
        barrier_us, object_us);
    std::fflush(stdout);
  }
  dist::destroy_process_group();
  return 0;
}

// Forks opt.nproc ranks of this program on 127.0.0.1 and waits (bounded) for them.
int fork_ranks(const BenchOptions& opt) {
  const std::string master = "127.0.0.1:" + std::to_string(crew::testing::free_port());
  const std::string token = crew::generate_job_token();  // rank 0's store admits only the ranks
  std::vector<pid_t> children;
  for (int r = 0; r < opt.nproc; ++r) {
    pid_t pid = ::fork();
    if (pid == 0) {
      ::setenv("CREW_RANK", std::to_string(r).c_str(), 1);
      ::setenv("CREW_WORLD_SIZE", std::to_string(opt.nproc).c_str(), 1);
      ::setenv("CREW_MASTER", master.c_str(), 1);
      ::setenv("CREW_JOB_TOKEN", token.c_str(), 1);
      int code = 1;
      try {
        code = run_rank(opt);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "allreduce_bench rank %d: %s\n", r, e.what());
      }
      std::fflush(stdout);
      ::_exit(code);
    }
    children.push_back(pid);
  }
  int failed = 0;
  const auto deadline = Clock::now() + std::chrono::seconds(opt.timeout_s);
  size_t done = 0;
  while (done < children.size()) {
    int status = 0;
    pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid > 0) {
      ++done;
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) failed = 1;
    } else if (Clock::now() > deadline) {
      std::fprintf(stderr, "allreduce_bench: ranks did not finish within %d s; killing them\n",
                   opt.timeout_s);
      for (pid_t c : children) ::kill(c, SIGKILL);
      while (::waitpid(-1, &status, 0) > 0) {
      }
      return 1;
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  return failed;
}

}  // namespace

int main(int argc, char** argv) {
  BenchOptions opt;
  CLI::App app{"crew all_reduce / barrier / all_gather_object benchmark"};
  app.add_option("--nproc", opt.nproc, "ranks to fork when not started by a launcher")
      ->check(crew::cli::in_range(opt.nproc, 2, 64));
  app.add_option("--backend", opt.backend, "gloo, shm or auto");
  app.add_option("--min-bytes", opt.min_bytes, "smallest message")
      ->check(crew::cli::in_range(opt.min_bytes, int64_t{4}, int64_t{1} << 34));
  app.add_option("--max-bytes", opt.max_bytes, "largest message")
      ->check(crew::cli::in_range(opt.max_bytes, int64_t{4}, int64_t{1} << 34));
  app.add_option("--step", opt.step, "size multiplier between rows")
      ->check(crew::cli::in_range(opt.step, 2, 1024));
  app.add_option("--max-iters", opt.max_iters, "iterations per size (at most)")
      ->check(crew::cli::in_range(opt.max_iters, 1, 100000));
  app.add_option("--latency-iters", opt.latency_iters, "barrier iterations")
      ->check(crew::cli::in_range(opt.latency_iters, 2, 100000));
  app.add_option("--timeout", opt.timeout_s, "seconds for the whole run and each collective")
      ->check(crew::cli::in_range(opt.timeout_s, 1, 86400));
  if (auto rc = crew::cli::parse(app, argc, argv, "allreduce_bench")) return *rc;
  opt.min_bytes = opt.min_bytes / 4 * 4;
  if (crew::env::get("CREW_RANK") || crew::env::get("PADDLE_TRAINER_ID") || crew::env::get("RANK")) {
    try {
      return run_rank(opt);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "allreduce_bench: %s\n", e.what());
      return 1;
    }
  }
  return fork_ranks(opt);
}
