// The machine's matrix-product rate through crew's matmul (oneDNN), float32 against bfloat16
// and float16, one thread by default: the ceiling a 16-bit training step can reach (issue 31
// asks for the bf16 gemm rate measured alone). Each shape runs the three products a Linear
// layer's step needs (forward x[M,K] w[K,N]; input gradient g[M,N] w^T; weight gradient
// x^T g), the dtypes interleaved within every repetition so that the host's drift hits all
// alike; prints the median GFLOP/s per dtype and the 16-bit / float32 ratio.
//
//   bin/gemm_rate                                   GPT shapes (M = 16 x 128 tokens) and squares
//   bin/gemm_rate --shapes 2048x256x768 --reps 9 --threads 1
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "crew/tensor/kernels/gemm.h"
#include "crew/tensor/kernels/threading.h"
#include "crew/tensor/random.h"

namespace {

using Clock = std::chrono::steady_clock;
using crew::DType;
using crew::Tensor;

struct Shape3 {
  int64_t m, k, n;
};

Shape3 parse_shape(const std::string& s) {
  Shape3 r{};
  char x1 = 0, x2 = 0;
  std::istringstream in(s);
  if (!(in >> r.m >> x1 >> r.k >> x2 >> r.n) || x1 != 'x' || x2 != 'x' || r.m <= 0 || r.k <= 0 || r.n <= 0) {
    throw CLI::ValidationError("--shapes", "expected MxKxN with positive sizes, got '" + s + "'");
  }
  return r;
}

// Seconds for the three products of one Linear step, `iters` times.
double time_step(const Tensor& x, const Tensor& w, const Tensor& g, int iters) {
  const auto t0 = Clock::now();
  for (int i = 0; i < iters; ++i) {
    Tensor y = crew::kernels::matmul(x, w, false, false);
    Tensor gx = crew::kernels::matmul(g, w, false, true);
    Tensor gw = crew::kernels::matmul(x, g, true, false);
  }
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

Tensor rnd(const crew::Shape& shape, DType dt) { return crew::normal(shape, 0.0, 1.0).to(dt); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void run_shape(const Shape3& s, const std::vector<DType>& dtypes, int reps, double min_seconds) {
  struct Operands {
    Tensor x, w, g;
  };
  std::vector<Operands> ops;
  for (DType dt : dtypes) {
    ops.push_back({rnd({s.m, s.k}, dt), rnd({s.k, s.n}, dt), rnd({s.m, s.n}, dt)});
  }
  const double flops = 3.0 * 2.0 * double(s.m) * double(s.k) * double(s.n);
  // Iterations per timing: enough for min_seconds at the float32 rate (one warm-up call first).
  time_step(ops[0].x, ops[0].w, ops[0].g, 1);
  const double once = std::max(time_step(ops[0].x, ops[0].w, ops[0].g, 1), 1e-6);
  const int iters = std::max(1, int(min_seconds / once));
  for (auto& o : ops) time_step(o.x, o.w, o.g, 1);
  std::vector<std::vector<double>> rates(dtypes.size());
  for (int r = 0; r < reps; ++r) {
    for (size_t d = 0; d < dtypes.size(); ++d) {
      rates[d].push_back(flops * iters / time_step(ops[d].x, ops[d].w, ops[d].g, iters) / 1e9);
    }
  }
  std::printf("| %lldx%lldx%lld |", (long long)s.m, (long long)s.k, (long long)s.n);
  const double base = median(rates[0]);
  for (size_t d = 0; d < dtypes.size(); ++d) {
    const double m = median(rates[d]);
    if (d == 0) {
      std::printf(" %.1f |", m);
    } else {
      std::printf(" %.1f (%.2fx) |", m, m / base);
    }
  }
  std::printf("\n");
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Matrix-product rate (GFLOP/s) through crew's matmul: float32 against bfloat16 and float16"};
  std::vector<std::string> shapes{"2048x256x768",  "2048x256x256",   "2048x256x1024",
                                  "2048x1024x256", "1024x1024x1024", "2048x2048x2048"};
  std::vector<std::string> dtype_names{"float32", "bfloat16"};
  int reps = 7, threads = 1;
  double min_seconds = 0.2;
  app.add_option("--shapes", shapes, "MxKxN: x[M,K] times w[K,N], with the two backward products");
  app.add_option("--dtypes", dtype_names, "float32 first, then bfloat16 and/or float16")
      ->check(CLI::IsMember({"float32", "bfloat16", "float16"}));
  app.add_option("--reps", reps, "repetitions (median reported)")->check(CLI::PositiveNumber);
  app.add_option("--threads", threads, "compute threads")->check(CLI::PositiveNumber);
  app.add_option("--min-seconds", min_seconds, "seconds per timing")->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);
  std::vector<Shape3> parsed;
  try {
    for (const auto& s : shapes) parsed.push_back(parse_shape(s));
  } catch (const CLI::Error& e) {
    return app.exit(e);
  }
  if (dtype_names.empty() || dtype_names[0] != "float32") dtype_names.insert(dtype_names.begin(), "float32");
  std::vector<DType> dtypes;
  for (const auto& n : dtype_names) {
    dtypes.push_back(n == "float32" ? DType::FLOAT32 : n == "bfloat16" ? DType::BFLOAT16 : DType::FLOAT16);
  }
  crew::set_num_threads(threads);
  std::printf("forward + both backward products, %d thread(s), median of %d, GFLOP/s\n| MxKxN |", threads,
              reps);
  for (const auto& n : dtype_names) std::printf(" %s |", n.c_str());
  std::printf("\n|---|");
  for (size_t i = 0; i < dtype_names.size(); ++i) std::printf("---:|");
  std::printf("\n");
  for (const auto& s : parsed) run_shape(s, dtypes, reps, min_seconds);
  return 0;
}
