// Wall time of `crew launch` with N workers: from starting the launcher to the first completed
// all_reduce (seen by rank 0), and to the launcher's exit. Run from the build tree:
//
//   bin/launch_bench --workers 2,4 --reps 10
//
// The same program is the worker: under the launcher (CREW_RANK set) it initialises the
// parallel environment, all_reduces one float, checks the sum, and prints the
// CLOCK_MONOTONIC time (system-wide, comparable across processes) at which it completed.
#include <fcntl.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "crew/core/check.h"
#include "crew/core/env.h"
#include "crew/core/spawn_process.h"
#include "crew/distributed/collective/collective.h"
#include "crew/distributed/parallel/parallel.h"
#include "crew/tensor/tensor.h"
#include "tools/cli_checks.h"

namespace {

double monotonic_ms() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

int run_worker() {
  crew::dist::init_parallel_env();
  const int rank = crew::dist::get_rank();
  const int world = crew::dist::get_world_size();
  crew::Tensor t = crew::Tensor::full({1}, rank + 1.0);
  crew::dist::all_reduce(t);
  const double done = monotonic_ms();
  const double expected = world * (world + 1) / 2.0;
  CREW_CHECK(t.item() == expected, "launch_bench: all_reduce gave ", t.item(), ", expected ", expected);
  if (rank == 0) std::printf("all_reduce done at %.3f\n", done);
  std::fflush(stdout);
  crew::dist::destroy_process_group();
  return 0;
}

struct Sample {
  double first_all_reduce_ms;
  double exit_ms;
};

Sample run_once(const std::string& crew, const std::string& self, int workers, const std::string& dir) {
  std::string devices;
  for (int i = 0; i < workers; ++i) devices += (i ? "," : "") + std::to_string(i);
  const std::string out_path = dir + "/console";
  int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  int devnull = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  crew::dist::ChildOptions o;
  o.argv = {crew,        "launch",     "--devices=" + devices, "--log_overwrite",
            "--log_dir", dir + "/log", "--log_level",          "WARNING",
            self};
  o.env = crew::dist::current_environment();
  o.stdout_fd = out;
  o.stderr_fd = devnull;
  const double start = monotonic_ms();
  crew::dist::ChildProcess launcher = crew::dist::ChildProcess::start(o);
  const auto& st = launcher.wait_for(std::chrono::seconds(60));
  const double end = monotonic_ms();
  ::close(out);
  ::close(devnull);
  CREW_CHECK(st.has_value() && st->success(), "launch_bench: crew launch with ", workers, " workers failed (",
             st ? st->describe() : std::string("timed out"), "); see ", dir, "/log");
  std::ifstream in(out_path);
  std::string line;
  double done = 0;
  while (std::getline(in, line)) {
    if (std::sscanf(line.c_str(), "all_reduce done at %lf", &done) == 1) break;
  }
  CREW_CHECK(done > 0, "launch_bench: rank 0 printed no completion time");
  return {done - start, end - start};
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (crew::env::get("CREW_RANK")) return run_worker();
  CLI::App app{"crew launch start-up benchmark"};
  std::vector<int> workers = {2, 4};
  int reps = 10;
  app.add_option("--workers", workers, "worker counts")->delimiter(',');
  app.add_option("--reps", reps, "runs per worker count")->check(crew::cli::above(reps, 0));
  if (auto rc = crew::cli::parse(app, argc, argv, "launch_bench")) return *rc;
  const std::string self = std::filesystem::canonical("/proc/self/exe").string();
  const std::string crew = std::filesystem::path(self).parent_path().string() + "/crew";
  char tmpl[] = "/tmp/crew_launch_bench_XXXXXX";
  const std::string dir = ::mkdtemp(tmpl);
  std::printf("%-8s %-6s %-28s %-28s\n", "workers", "reps", "first all_reduce ms (med/min)",
              "exit ms (med/min)");
  for (int n : workers) {
    std::vector<double> first, exit;
    run_once(crew, self, n, dir);  // warm the page cache
    for (int r = 0; r < reps; ++r) {
      Sample s = run_once(crew, self, n, dir);
      first.push_back(s.first_all_reduce_ms);
      exit.push_back(s.exit_ms);
    }
    std::printf("%-8d %-6d %8.1f / %-17.1f %8.1f / %-17.1f\n", n, reps, median(first),
                *std::min_element(first.begin(), first.end()), median(exit),
                *std::min_element(exit.begin(), exit.end()));
  }
  std::filesystem::remove_all(dir);
  return 0;
}
