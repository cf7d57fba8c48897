// Collective bandwidth and latency of crew's backends side by side, in the style of
// nccl-tests: for each backend, op and size, min / median / max over several runs of the
// slowest rank's time per op, and algbw = size / time, busbw = algbw * factor(op, n)
// (all_reduce 2(n-1)/n; all_gather, reduce_scatter, alltoall (n-1)/n; broadcast, reduce 1).
// Sizes follow nccl-tests: all_gather's size is its whole output, reduce_scatter's its
// whole input. Then barrier and all_gather_object (of {'foo': [1, 2, 3]}) latency.
//
//   ./collectives_bench --nprocs 2                               # forks 2 ranks on this host
//   ./collectives_bench --nprocs 2 --backend shm,gloo --op all_reduce,all_gather --sizes 4:64M
//   ./collectives_bench --nprocs 2 --debug detail     # the cost of hang/desync detection
//   crew launch --nproc_per_node 2 ./collectives_bench           # ranks from the environment
//   ./collectives_bench --nprocs 4 --hosts 2 --backend hier,gloo  # 2 simulated hosts x 2 ranks
//
// Forked ranks (--nprocs) rendezvous through files in a fresh /tmp directory; launched ones
// through the job's store.

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "crew/core/env.h"
#include "crew/core/parallel_env.h"
#include "crew/distributed/backends/gloo/gloo_process_group.h"
#include "crew/distributed/backends/hier/hier_process_group.h"
#include "crew/distributed/backends/shm/shm_process_group.h"
#include "crew/distributed/collective/object_collectives.h"
#include "crew/distributed/debug/debug_process_group.h"
#include "crew/distributed/parallel/parallel.h"
#include "crew/distributed/store/prefix_store.h"
#include "crew/distributed/store/tcp_store.h"
#include "tests/distributed/shm_harness.h"
#include "tests/testing/store_ptr.h"
#include "tools/cli_checks.h"

namespace dist = crew::dist;
using crew::DType;
using crew::Tensor;
using Clock = std::chrono::steady_clock;

namespace {

struct BenchOptions {
  int nprocs = 0;  // 0: ranks come from the environment
  int hosts = 0;   // > 0: forked rank r runs on simulated host r * hosts / nprocs (CREW_HOST_ID)
  std::vector<std::string> backends = {"shm", "gloo"};
  std::vector<std::string> ops = {"all_reduce"};
  std::string sizes = "4:64M";
  int factor = 4;                         // size multiplier between rows
  int runs = 5;                           // timed runs per row (min/median/max over these)
  int64_t run_bytes = int64_t{64} << 20;  // traffic per run: iterations = run_bytes / size
  int max_iters = 1000;
  int latency_iters = 2000;  // barriers per run
  std::string dtype = "float32";
  int timeout_s = 600;
  // none: the backend's group; off: wrapped in a DebugProcessGroup (what init_parallel_env
  // gives: records, reports, watchdog); detail: also CREW_DIST_DEBUG=DETAIL's agreement check.
  std::string debug = "none";
  // at_once: ops are issued with async_op = false, as dist::all_reduce & co. issue synchronous
  // ops; wake: async_op = true, the worker thread is woken for each op (DataParallel's buckets).
  std::string issue = "at_once";
  // plain: all_reduce an ordinary tensor; group: one from ProcessGroup::allocate_buffer (shm:
  // in shared memory, reduced in place, as DataParallel's buckets are).
  std::string buffer = "plain";
};

int64_t parse_size(const std::string& s) {
  CREW_CHECK(!s.empty(), "collectives_bench: empty size");
  int64_t mult = 1;
  std::string digits = s;
  const char last = static_cast<char>(std::toupper(static_cast<unsigned char>(s.back())));
  if (last == 'K' || last == 'M' || last == 'G') {
    mult = last == 'K' ? 1024 : last == 'M' ? (1 << 20) : (int64_t{1} << 30);
    digits = s.substr(0, s.size() - 1);
  }
  return std::stoll(digits) * mult;
}

double bus_factor(const std::string& op, int n) {
  if (op == "all_reduce") return 2.0 * (n - 1) / n;
  if (op == "broadcast" || op == "reduce") return 1.0;
  return static_cast<double>(n - 1) / n;
}

struct Stats {
  double min = 0, median = 0, max = 0;
};

// Per-run times -> the slowest rank's time per run (all_reduce MAX) -> min/median/max.
Stats slowest(dist::ProcessGroup& pg, const std::vector<double>& per_run_us) {
  Tensor t = Tensor::from_vector<double>(per_run_us);
  pg.all_reduce(t, {.op = dist::ReduceOp::MAX, .async_op = false})->wait();
  std::vector<double> v = t.to_vector<double>();
  std::sort(v.begin(), v.end());
  return Stats{v.front(), v[v.size() / 2], v.back()};
}

// One op on `bytes` (nccl-tests' size), ready to run repeatedly.
struct OpRunner {
  std::string op;
  int64_t count = 0;  // elements of the size
  std::function<void()> run;
};

OpRunner make_runner(dist::ProcessGroup& pg, const std::string& op, int64_t bytes, DType dtype,
                     const std::string& buffer, bool async) {
  const int n = pg.size();
  const int64_t esize = static_cast<int64_t>(crew::dtype_size(dtype));
  const int64_t count = std::max<int64_t>(1, bytes / esize);
  const int64_t per_rank = std::max<int64_t>(1, count / n);
  auto list = [&](int64_t elems) {
    std::vector<Tensor> v;
    for (int r = 0; r < n; ++r) v.push_back(Tensor::ones({elems}, dtype));
    return v;
  };
  OpRunner runner{op, count, {}};
  if (op == "all_reduce") {
    Tensor t = buffer == "group" ? pg.allocate_buffer(count, dtype) : Tensor::ones({count}, dtype);
    runner.run = [&pg, t, async]() mutable {
      pg.all_reduce(t, {.op = dist::ReduceOp::SUM, .async_op = async})->wait();
    };
  } else if (op == "broadcast") {
    Tensor t = Tensor::ones({count}, dtype);
    runner.run = [&pg, t, async]() mutable { pg.broadcast(t, {.root = 0, .async_op = async})->wait(); };
  } else if (op == "reduce") {
    Tensor t = Tensor::ones({count}, dtype);
    runner.run = [&pg, t, async]() mutable {
      pg.reduce(t, {.root = 0, .op = dist::ReduceOp::SUM, .async_op = async})->wait();
    };
  } else if (op == "all_gather") {
    Tensor in = Tensor::ones({per_rank}, dtype);
    auto outs = list(per_rank);
    runner.run = [&pg, in, outs, async]() mutable { pg.all_gather(outs, in, {.async_op = async})->wait(); };
  } else if (op == "reduce_scatter") {
    Tensor out = Tensor::ones({per_rank}, dtype);
    auto ins = list(per_rank);
    runner.run = [&pg, out, ins, async]() mutable {
      pg.reduce_scatter(out, ins, {.op = dist::ReduceOp::SUM, .async_op = async})->wait();
    };
  } else if (op == "alltoall") {
    auto ins = list(per_rank);
    auto outs = list(per_rank);
    runner.run = [&pg, ins, outs, async]() mutable { pg.alltoall(outs, ins, {.async_op = async})->wait(); };
  } else {
    CREW_THROW(ValueError, "collectives_bench: unknown op '", op,
               "' (all_reduce, broadcast, reduce, all_gather, reduce_scatter, alltoall)");
  }
  return runner;
}

std::shared_ptr<dist::ProcessGroup> make_group(const std::string& backend,
                                               const std::shared_ptr<dist::Store>& store, int rank, int world,
                                               const BenchOptions& opt) {
  dist::ProcessGroupOptions options;
  options.timeout = std::chrono::seconds(opt.timeout_s);
  options.group_name = "bench_" + backend;
  std::shared_ptr<dist::ProcessGroup> pg;
  if (backend == "shm")
    pg = dist::create_shm_process_group(store, rank, world, options);
  else if (backend == "gloo")
    pg = std::make_shared<dist::GlooProcessGroup>(store, rank, world, options);
  else if (backend == "hier")
    pg = dist::create_hier_process_group(store, rank, world, options);
  else
    CREW_THROW(ValueError, "collectives_bench: unknown backend '", backend, "' (shm, gloo, hier)");
  if (opt.debug == "none") return pg;
  CREW_CHECK(opt.debug == "off" || opt.debug == "detail",
             "collectives_bench: --debug must be none, off or detail, got '", opt.debug, "'");
  dist::DebugOptions debug;
  debug.detail = opt.debug == "detail";
  return dist::wrap_for_debug(std::move(pg), store, debug);
}

// all_gather_object of a small dict through this group (wrapped in a dist::Group).
void bench_all_gather_object(dist::ProcessGroup& pg, const BenchOptions& opt) {
  std::vector<int> ranks;
  for (int r = 0; r < pg.size(); ++r) ranks.push_back(r);
  std::shared_ptr<dist::ProcessGroup> borrowed(&pg, [](dist::ProcessGroup*) {});
  dist::Group group(pg.rank(), 1000, ranks, borrowed, "bench_" + pg.backend_name());
  const dist::Object obj = dist::Object::dict({{"foo", dist::Object::list({1, 2, 3})}});
  std::vector<dist::Object> gathered;
  const int iters = std::max(1, opt.latency_iters / 4);
  std::vector<double> per_run;
  for (int r = 0; r < opt.runs; ++r) {
    pg.barrier({.async_op = opt.issue == "wake"})->wait();
    const auto t0 = Clock::now();
    for (int i = 0; i < iters; ++i) dist::all_gather_object(gathered, obj, &group);
    per_run.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / iters);
  }
  CREW_CHECK(static_cast<int>(gathered.size()) == pg.size(), "all_gather_object returned ", gathered.size(),
             " objects");
  const Stats s = slowest(pg, per_run);
  if (pg.rank() == 0) {
    std::printf(
        "# all_gather_object({'foo': [1, 2, 3]}), backend %s, %d ranks: min %.2f us, median %.2f us, "
        "max %.2f us\n",
        pg.backend_name().c_str(), pg.size(), s.min, s.median, s.max);
    std::fflush(stdout);
  }
}

void bench_backend(dist::ProcessGroup& pg, const BenchOptions& opt, int64_t min_bytes, int64_t max_bytes) {
  const int rank = pg.rank(), n = pg.size();
  const DType dtype = crew::parse_dtype(opt.dtype);
  for (const auto& op : opt.ops) {
    if (rank == 0) {
      std::printf("\n# %s, backend %s, %d ranks, %d runs per size (min/median/max of the slowest rank)\n",
                  op.c_str(), pg.backend_name().c_str(), n, opt.runs);
      std::printf("#%11s %12s %8s %11s %11s %11s %9s %9s\n", "size(B)", "count", "type", "min(us)",
                  "median(us)", "max(us)", "algbw", "busbw");
      std::printf("#%11s %12s %8s %11s %11s %11s %9s %9s\n", "", "(elems)", "", "", "", "", "(GB/s)",
                  "(GB/s)");
    }
    for (int64_t bytes = min_bytes; bytes <= max_bytes; bytes *= opt.factor) {
      OpRunner runner = make_runner(pg, op, bytes, dtype, opt.buffer, opt.issue == "wake");
      const int iters = static_cast<int>(std::clamp<int64_t>(opt.run_bytes / bytes, 3, opt.max_iters));
      for (int w = 0; w < 2; ++w) runner.run();
      std::vector<double> per_run;
      for (int r = 0; r < opt.runs; ++r) {
        pg.barrier({.async_op = opt.issue == "wake"})->wait();
        const auto t0 = Clock::now();
        for (int i = 0; i < iters; ++i) runner.run();
        per_run.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / iters);
      }
      const Stats s = slowest(pg, per_run);
      const double real_bytes = static_cast<double>(runner.count) * crew::dtype_size(dtype);
      const double algbw = real_bytes / (s.median * 1e-6) / 1e9;
      if (rank == 0) {
        std::printf(" %11.0f %12lld %8s %11.2f %11.2f %11.2f %9.3f %9.3f\n", real_bytes,
                    static_cast<long long>(runner.count), opt.dtype.c_str(), s.min, s.median, s.max, algbw,
                    algbw * bus_factor(op, n));
        std::fflush(stdout);
      }
    }
  }
  std::vector<double> per_run;
  for (int r = 0; r < opt.runs; ++r) {
    pg.barrier({.async_op = opt.issue == "wake"})->wait();
    const auto t0 = Clock::now();
    for (int i = 0; i < opt.latency_iters; ++i) pg.barrier({.async_op = opt.issue == "wake"})->wait();
    per_run.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count() /
                      opt.latency_iters);
  }
  const Stats s = slowest(pg, per_run);
  if (rank == 0) {
    std::printf("\n# barrier, backend %s, %d ranks: min %.2f us, median %.2f us, max %.2f us\n",
                pg.backend_name().c_str(), n, s.min, s.median, s.max);
    std::fflush(stdout);
  }
  bench_all_gather_object(pg, opt);
}

void run_rank(int rank, int world, dist::Store& store_ref, const BenchOptions& opt) {
  if (opt.hosts > 0) {
    ::setenv("CREW_HOST_ID", ("bench-host-" + std::to_string(rank * opt.hosts / world)).c_str(), 1);
  }
  std::shared_ptr<dist::Store> store = crew::testing::borrow_store(store_ref);
  const auto colon = opt.sizes.find(':');
  const int64_t min_bytes = parse_size(opt.sizes.substr(0, colon));
  const int64_t max_bytes = colon == std::string::npos ? min_bytes : parse_size(opt.sizes.substr(colon + 1));
  CREW_CHECK(min_bytes > 0 && max_bytes >= min_bytes && opt.factor >= 2, "collectives_bench: bad --sizes '",
             opt.sizes, "' or --factor ", opt.factor);
  CREW_CHECK(opt.issue == "at_once" || opt.issue == "wake", "collectives_bench: --issue '", opt.issue,
             "': expected at_once or wake");
  for (const auto& backend : opt.backends) {
    auto pg = make_group(backend, store, rank, world, opt);
    bench_backend(*pg, opt, min_bytes, max_bytes);
  }
}

}  // namespace

int main(int argc, char** argv) {
  BenchOptions opt;
  CLI::App app{"crew collectives benchmark (nccl-tests style), backends side by side"};
  app.add_option("--nprocs", opt.nprocs,
                 "fork this many ranks on this host (0: take them from the environment)")
      ->check(crew::cli::at_least(opt.nprocs, 0));
  app.add_option("--backend", opt.backends, "backends, comma separated (shm, gloo, hier)")->delimiter(',');
  app.add_option("--hosts", opt.hosts,
                 "with --nprocs: simulate this many hosts (for hier), ranks split evenly")
      ->check(crew::cli::at_least(opt.hosts, 0));
  app.add_option("--op", opt.ops, "ops: all_reduce, broadcast, reduce, all_gather, reduce_scatter, alltoall")
      ->delimiter(',');
  app.add_option("--sizes", opt.sizes, "min:max bytes, with K/M/G suffixes");
  app.add_option("--factor", opt.factor, "size multiplier between rows")
      ->check(crew::cli::at_least(opt.factor, 2));
  app.add_option("--runs", opt.runs, "timed runs per size")->check(crew::cli::above(opt.runs, 0));
  app.add_option("--run-bytes", opt.run_bytes, "bytes moved per run (sets the iterations)");
  app.add_option("--max-iters", opt.max_iters, "most iterations per run")
      ->check(crew::cli::above(opt.max_iters, 0));
  app.add_option("--latency-iters", opt.latency_iters, "barriers per run")
      ->check(crew::cli::above(opt.latency_iters, 0));
  app.add_option("--dtype", opt.dtype, "float32, float64, int32, int64, uint8");
  app.add_option("--debug", opt.debug,
                 "none (the backend's group), off (DebugProcessGroup), detail (DETAIL check)");
  app.add_option("--timeout", opt.timeout_s, "seconds, per collective and for the whole forked run")
      ->check(crew::cli::above(opt.timeout_s, 0));
  app.add_option("--buffer", opt.buffer,
                 "all_reduce: plain tensors, or group: from ProcessGroup::allocate_buffer (shm: in place)")
      ->check(CLI::IsMember({"plain", "group"}));
  app.add_option(
      "--issue", opt.issue,
      "at_once: ops issued as synchronous collectives are (no worker wake-up); wake: as async ops");
  if (auto rc = crew::cli::parse(app, argc, argv, "collectives_bench")) return *rc;
  try {
    if (opt.nprocs > 0) {
      auto results = crew::testing::shm::run_ranks(
          opt.nprocs, [&](int rank, dist::Store& store) { run_rank(rank, opt.nprocs, store, opt); },
          crew::testing::RunRanksOptions{.timeout = std::chrono::seconds(opt.timeout_s)});
      int failed = 0;
      for (size_t r = 0; r < results.size(); ++r) {
        if (!results[r].ok()) {
          std::fprintf(stderr, "collectives_bench: rank %zu failed (exit %d, signal %d%s)\n", r,
                       results[r].exit_code, results[r].signal, results[r].timed_out ? ", timed out" : "");
          ++failed;
        }
      }
      return failed == 0 ? 0 : 1;
    }
    // Launched: the job's own store (crew launch serves it; otherwise rank 0 hosts it), new for
    // every launch. A file store in a directory named after the job and the store's port kept
    // the keys of an earlier run that had had the same port, so a rank could read its peer's
    // old Gloo address and then wait forever (both ranks listening) or be refused.
    const crew::ParallelEnv env = crew::ParallelEnv::from_env();
    CREW_CHECK(env.has_master(),
               "collectives_bench: no rendezvous address; run it under crew launch, or "
               "give --nprocs N");
    dist::TCPStoreOptions store_options;
    store_options.port = env.master_port;
    store_options.is_server = env.rank == 0 && !crew::env::get_bool("CREW_STORE_HOSTED", false);
    store_options.timeout = store_options.connect_timeout = std::chrono::seconds(opt.timeout_s);
    store_options.job_token = env.job_token;
    store_options.insecure = env.insecure_store;
    auto job_store = std::make_shared<dist::TCPStore>(env.master_addr, store_options);
    dist::PrefixStore store("collectives_bench/", job_store);
    run_rank(env.rank, env.world_size, store, opt);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "collectives_bench: %s\n", e.what());
    return 1;
  }
}
