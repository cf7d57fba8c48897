// How steady this machine's CPUs are: times repeated chunks of identical, register-only
// work (independent FMAs, no memory traffic), pinned to each CPU in turn and then on all
// of them at once, and prints each CPU's mean, standard deviation and percentiles. On a
// dedicated core the spread is a few percent; on a shared VM host it can reach 10% of a
// chunk, and a synchronous data-parallel step, which waits for the slowest rank, pays for
// it (docs/benchmarks.md, "Where the rest goes").
//
//   bin/host_jitter                       # 5 ms chunks, 900 each
//   bin/host_jitter --chunk-ms 10 --chunks 300
#include <sched.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <thread>
#include <vector>

#include "tools/cli_checks.h"

namespace {

using Clock = std::chrono::steady_clock;

// Ten independent multiply-add chains; the compiler keeps them in registers.
struct Work {
  float a[10];
  Work() {
    for (int i = 0; i < 10; ++i) a[i] = 1.0f + static_cast<float>(i) * 1e-7f;
  }
  void run(long iterations) {
    for (long k = 0; k < iterations; ++k) {
      for (float& x : a) x = x * 0.9999999f + 1e-7f;
    }
  }
  float sum() const {
    float s = 0;
    for (float x : a) s += x;
    return s;
  }
};

void pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  sched_setaffinity(0, sizeof set, &set);
}

struct Summary {
  double mean = 0, sd = 0, p10 = 0, p50 = 0, p90 = 0;
};

Summary summarise(std::vector<double> t) {
  Summary s;
  for (double v : t) s.mean += v;
  s.mean /= static_cast<double>(t.size());
  for (double v : t) s.sd += (v - s.mean) * (v - s.mean);
  s.sd = std::sqrt(s.sd / static_cast<double>(t.size()));
  std::sort(t.begin(), t.end());
  auto at = [&](double q) { return t[static_cast<size_t>(q * static_cast<double>(t.size() - 1))]; };
  s.p10 = at(0.1), s.p50 = at(0.5), s.p90 = at(0.9);
  return s;
}

// Chunk times (us) on `cpu`.
std::vector<double> measure(int cpu, long iterations, int chunks, float* sink) {
  pin(cpu);
  Work w;
  std::vector<double> t;
  t.reserve(static_cast<size_t>(chunks));
  for (int c = 0; c < chunks; ++c) {
    const auto start = Clock::now();
    w.run(iterations);
    t.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
  }
  *sink += w.sum();
  return t;
}

void print(const char* what, int cpu, const Summary& s) {
  std::printf("%-8s cpu %d: chunk mean %7.0f us  sd %5.0f us (%4.1f%%)  p10 %7.0f  p50 %7.0f  p90 %7.0f\n", what,
              cpu, s.mean, s.sd, 100 * s.sd / s.mean, s.p10, s.p50, s.p90);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Time identical register-only work chunks on each CPU, alone and all at once"};
  double chunk_ms = 5;
  int chunks = 900;
  app.add_option("--chunk-ms", chunk_ms, "target length of one chunk")->check(crew::cli::above(chunk_ms, 0));
  app.add_option("--chunks", chunks, "chunks per CPU")->check(crew::cli::above(chunks, 0));
  if (auto rc = crew::cli::parse(app, argc, argv, "host_jitter")) return *rc;

  const int cpus = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  float sink = 0;
  // Calibrate the iterations of one chunk on CPU 0.
  pin(0);
  Work probe;
  long iterations = 1 << 16;
  for (;;) {
    const auto start = Clock::now();
    probe.run(iterations);
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    if (ms > 20) {
      iterations = static_cast<long>(static_cast<double>(iterations) * chunk_ms / ms);
      break;
    }
    iterations *= 2;
  }
  sink += probe.sum();

  for (int cpu = 0; cpu < cpus; ++cpu) print("alone", cpu, summarise(measure(cpu, iterations, chunks, &sink)));
  std::vector<std::vector<double>> together(static_cast<size_t>(cpus));
  std::vector<float> sinks(static_cast<size_t>(cpus), 0.0f);
  std::vector<std::thread> threads;
  for (int cpu = 0; cpu < cpus; ++cpu) {
    threads.emplace_back([&, cpu] { together[cpu] = measure(cpu, iterations, chunks, &sinks[cpu]); });
  }
  for (auto& t : threads) t.join();
  for (int cpu = 0; cpu < cpus; ++cpu) print("together", cpu, summarise(together[cpu]));
  // What a step kept in step across all CPUs would take: the slowest CPU's chunk each time.
  std::vector<double> slowest(static_cast<size_t>(chunks), 0.0);
  for (int c = 0; c < chunks; ++c) {
    for (int cpu = 0; cpu < cpus; ++cpu) slowest[c] = std::max(slowest[c], together[cpu][c]);
  }
  double mean_chunk = 0;
  for (const auto& t : together) mean_chunk += summarise(t).mean / static_cast<double>(cpus);
  const Summary s = summarise(slowest);
  std::printf("in step (chunk by chunk, the slowest CPU's): mean %.0f us, %.1f%% above the mean chunk\n", s.mean,
              100 * (s.mean / mean_chunk - 1));
  for (float v : sinks) sink += v;
  return sink == 12345.0f ? 1 : 0;  // keeps the work from being optimised away
}
