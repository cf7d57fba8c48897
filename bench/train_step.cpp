// One full training step (forward, backward, Adam) of the seed's CNN (crew::nn::models::MyNet),
// batch 32 by default, on 1x28x28 and 3x32x32 inputs, with 1 and 2 intra-op threads.
// Prints images/s (min / median / max over repetitions), achieved GFLOP/s, and the median
// split of a step into forward / backward / optimizer time.
//
//   bin/train_step --threads 1,2 --reps 7 --steps 20
#include <time.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "crew/autograd/autograd.h"
#include "crew/nn/functional.h"
#include "crew/nn/models/my_net.h"
#include "crew/optim/adam.h"
#include "crew/tensor/kernels/gemm.h"
#include "crew/tensor/kernels/threading.h"
#include "crew/tensor/random.h"
#include "tools/cli_checks.h"

namespace {

using Clock = std::chrono::steady_clock;
namespace F = crew::nn::functional;

struct Geometry {
  int64_t channels, size;
};

// Forward + backward FLOPs per image: every conv/linear costs 2*MACs forward, as much again
// for the weight gradient, and as much again for the input gradient except the first layer
// (its input needs none). 16.4 MFLOP for 1x28x28.
double flops_per_image(const Geometry& g) {
  struct Layer {
    double macs;
    bool first;
  };
  std::vector<Layer> layers;
  int64_t s = g.size - 2;
  layers.push_back({double(s * s) * 32 * g.channels * 9, true});
  s = s / 2 - 2;
  layers.push_back({double(s * s) * 64 * 32 * 9, false});
  s = s / 2 - 2;
  layers.push_back({double(s * s) * 64 * 64 * 9, false});
  layers.push_back({double(64 * s * s) * 64, false});
  layers.push_back({64.0 * 10, false});
  double total = 0;
  for (const Layer& l : layers) total += 2 * l.macs * (l.first ? 2 : 3);
  return total;
}

double seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// CPU seconds used by the whole process so far. On a shared, loaded machine wall time
// includes time spent descheduled; CPU time per thread approximates an idle machine's wall
// time (exactly so for one thread; with more, spin-waiting counts too, so it is pessimistic).
double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// One gemm of a layer's pass: C[m, n] = op(A)[m, k] op(B)[k, n].
struct GemmShape {
  int64_t m, n, k;
  bool trans_a, trans_b;
};

// The gemms the step would run if every conv were im2col + sgemm and every linear a gemm: per
// layer the forward product, the weight gradient and (but for the first layer) the input
// gradient, with the same FLOPs as flops_per_image.
std::vector<GemmShape> step_gemms(const Geometry& g, int64_t batch) {
  struct Layer {
    int64_t rows, in, out;  // rows of the product (batch x output pixels), in/out features
  };
  std::vector<Layer> layers;
  int64_t s = g.size - 2;
  layers.push_back({batch * s * s, g.channels * 9, 32});
  s = s / 2 - 2;
  layers.push_back({batch * s * s, 32 * 9, 64});
  s = s / 2 - 2;
  layers.push_back({batch * s * s, 64 * 9, 64});
  layers.push_back({batch, 64 * s * s, 64});
  layers.push_back({batch, 64, 10});
  std::vector<GemmShape> out;
  for (size_t i = 0; i < layers.size(); ++i) {
    const Layer& l = layers[i];
    out.push_back({l.rows, l.out, l.in, false, false});      // forward: [rows, in] x [in, out]
    out.push_back({l.in, l.out, l.rows, true, false});       // weight grad: [in, rows] x [rows, out]
    if (i > 0) out.push_back({l.rows, l.in, l.out, false, true});  // input grad: [rows, out] x [out, in]
  }
  return out;
}

// oneDNN's sgemm on this machine at the step's shapes (the best of `reps` timings of each):
// the images/s the step would reach if every layer ran at the gemm's rate, and that rate.
std::pair<double, double> gemm_ceiling(const Geometry& g, int64_t batch, int reps) {
  double seconds_per_step = 0, flops_per_step = 0;
  for (const GemmShape& s : step_gemms(g, batch)) {
    std::vector<float> a(s.m * s.k, 0.5f), b(s.k * s.n, 0.25f), c(s.m * s.n);
    const int64_t lda = s.trans_a ? s.m : s.k, ldb = s.trans_b ? s.k : s.n;
    double best = 1e300;
    for (int r = 0; r < reps; ++r) {
      const auto t0 = Clock::now();
      crew::kernels::gemm(s.trans_a, s.trans_b, s.m, s.n, s.k, 1.0f, a.data(), lda, b.data(), ldb, 0.0f, c.data(),
                          s.n);
      best = std::min(best, seconds(t0, Clock::now()));
    }
    seconds_per_step += best;
    flops_per_step += 2.0 * double(s.m) * double(s.n) * double(s.k);
  }
  return {double(batch) / seconds_per_step, flops_per_step / seconds_per_step / 1e9};
}

struct Options {
  int64_t batch = 32;
  int steps = 20;
  int reps = 7;
  int warmup = 5;
  std::vector<int> threads{1, 2};
  std::vector<std::string> inputs{"1x28x28", "3x32x32"};
  bool gemm_ceiling = true;
};

Geometry parse_geometry(const std::string& text) {
  int c = 0, h = 0, w = 0;
  if (std::sscanf(text.c_str(), "%dx%dx%d", &c, &h, &w) != 3 || h != w || c < 1 || h < 22) {
    throw CLI::ValidationError("--inputs", "expected CxSxS with S >= 22, got " + text);
  }
  return {c, h};
}

void run(const Options& opt, const Geometry& g, int threads) {
  crew::set_num_threads(threads);
  crew::seed(1);
  auto net = std::make_shared<crew::nn::models::MyNet>(10, g.channels, g.size);
  net->train();
  crew::optim::Adam adam(net->parameters(), {.learning_rate = 1e-3});
  crew::Tensor x = crew::uniform({opt.batch, g.channels, g.size, g.size}, 0, 1);
  std::vector<int64_t> labels(opt.batch);
  for (int64_t i = 0; i < opt.batch; ++i) labels[i] = i % 10;
  crew::Tensor y = crew::Tensor::from_vector(labels, {opt.batch, 1});

  double fwd = 0, bwd = 0, upd = 0;
  auto step = [&] {
    const auto t0 = Clock::now();
    crew::Tensor loss = F::cross_entropy(net->forward(x), y);
    const auto t1 = Clock::now();
    loss.backward();
    const auto t2 = Clock::now();
    adam.step();
    adam.clear_grad();
    const auto t3 = Clock::now();
    fwd += seconds(t0, t1);
    bwd += seconds(t1, t2);
    upd += seconds(t2, t3);
  };
  for (int i = 0; i < opt.warmup; ++i) step();
  std::vector<double> rates, cpu_rates, fwd_ms, bwd_ms, upd_ms;
  for (int r = 0; r < opt.reps; ++r) {
    fwd = bwd = upd = 0;
    const auto start = Clock::now();
    const double cpu_start = process_cpu_seconds();
    for (int i = 0; i < opt.steps; ++i) step();
    const double elapsed = seconds(start, Clock::now());
    const double cpu_per_thread = (process_cpu_seconds() - cpu_start) / threads;
    rates.push_back(double(opt.batch) * opt.steps / elapsed);
    cpu_rates.push_back(double(opt.batch) * opt.steps / cpu_per_thread);
    fwd_ms.push_back(1e3 * fwd / opt.steps);
    bwd_ms.push_back(1e3 * bwd / opt.steps);
    upd_ms.push_back(1e3 * upd / opt.steps);
  }
  const double med = median(rates);
  const double mflop = flops_per_image(g) / 1e6;
  std::printf(
      "%dx%dx%-3d threads=%d batch=%lld  images/s min %7.0f  median %7.0f  max %7.0f  "
      "GFLOP/s %5.1f  | by CPU time: images/s %7.0f GFLOP/s %5.1f  (%.1f MFLOP/image; step ms: fwd %.2f "
      "bwd %.2f adam %.2f)\n",
      int(g.channels), int(g.size), int(g.size), threads, static_cast<long long>(opt.batch),
      *std::min_element(rates.begin(), rates.end()), med, *std::max_element(rates.begin(), rates.end()),
      med * mflop / 1e3, median(cpu_rates), median(cpu_rates) * mflop / 1e3, mflop, median(fwd_ms),
      median(bwd_ms), median(upd_ms));
  if (opt.gemm_ceiling) {
    const auto [ceiling, gflops] = gemm_ceiling(g, opt.batch, 20);
    std::printf("  sgemm at the step's im2col/linear shapes: %.1f GFLOP/s = %.0f images/s; the step reaches %.0f%% "
                "(by CPU time %.0f%%)\n",
                gflops, ceiling, 100.0 * med / ceiling, 100.0 * median(cpu_rates) / ceiling);
  }
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  CLI::App app{"crew training-step benchmark (seed CNN, forward + backward + Adam)"};
  app.add_option("--batch", opt.batch, "batch size")->check(crew::cli::above(opt.batch, 0));
  app.add_option("--steps", opt.steps, "steps per timed repetition")->check(crew::cli::above(opt.steps, 0));
  app.add_option("--reps", opt.reps, "timed repetitions")->check(crew::cli::above(opt.reps, 0));
  app.add_option("--warmup", opt.warmup, "untimed steps first")->check(crew::cli::at_least(opt.warmup, 0));
  app.add_option("--threads", opt.threads, "thread counts to run")->delimiter(',');
  app.add_option("--inputs", opt.inputs, "input geometries CxSxS")->delimiter(',');
  app.add_flag("!--no-gemm-ceiling", opt.gemm_ceiling,
               "skip timing oneDNN's sgemm at the step's shapes (the compute ceiling)");
  if (auto rc = crew::cli::parse(app, argc, argv, "train_step")) return *rc;
  try {
    for (const std::string& in : opt.inputs) {
      const Geometry g = parse_geometry(in);
      for (int t : opt.threads) run(opt, g, t);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "train_step: %s\n", e.what());
    return 1;
  }
  return 0;
}
