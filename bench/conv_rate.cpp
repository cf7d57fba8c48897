// A convolution's three passes through crew's kernels, float32 against bfloat16, one thread by
// default: where 16-bit convolutions pay off and where they do not (issue 31's ResNet-18 figure
// is made of these). Activations come in oneDNN's blocked layout (as from a previous layer),
// weights row-major (as parameters are), so each pass includes the weight reorder a training
// step pays. The dtypes alternate within every repetition; prints median milliseconds per pass
// and the float32 / bf16 speed ratio of each pass and of all three.
//
//   bin/conv_rate                                    ResNet-18's 3x3 layers at 32x32 and 224x224 inputs
//   bin/conv_rate --shapes 32,256,256,2,3 --reps 9   batch, in, out channels, spatial size, kernel
#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "crew/tensor/kernels/conv.h"
#include "crew/tensor/kernels/threading.h"
#include "crew/tensor/random.h"

namespace {

using Clock = std::chrono::steady_clock;
using crew::DType;
using crew::Tensor;
namespace K = crew::kernels;

struct ConvShape {
  int64_t n, c, o, size, k;
};

ConvShape parse_shape(const std::string& s) {
  ConvShape r{};
  std::array<int64_t*, 5> f{&r.n, &r.c, &r.o, &r.size, &r.k};
  std::istringstream in(s);
  for (size_t i = 0; i < f.size(); ++i) {
    char comma = ',';
    if (!(in >> *f[i]) || *f[i] <= 0 || (i + 1 < f.size() && !(in >> comma)) || comma != ',') {
      throw CLI::ValidationError("--shapes", "expected N,C,O,SIZE,K with positive numbers, got '" + s + "'");
    }
  }
  return r;
}

// The operands of one convolution in one dtype: x and grad_y in the blocked layout a preceding
// convolution leaves (made by one), the weight row-major.
struct Operands {
  Tensor x, w, grad_y;
  K::Conv2dParams p;
};

Operands make_operands(const ConvShape& s, DType dt) {
  Operands o;
  o.p.padding = {s.k / 2, s.k / 2};
  K::Conv2dParams same;
  same.padding = {1, 1};
  auto blocked = [&](int64_t channels) {
    Tensor plain = crew::normal({s.n, channels, s.size, s.size}, 0.0, 1.0).to(dt);
    Tensor eye = crew::normal({channels, channels, 3, 3}, 0.0, 0.1).to(dt);
    return K::conv2d_forward(plain, eye, Tensor(), same);
  };
  o.x = blocked(s.c);
  o.grad_y = blocked(s.o);
  o.w = crew::normal({s.o, s.c, s.k, s.k}, 0.0, 0.05).to(dt);
  return o;
}

// Milliseconds of forward, backward-data and backward-weights, each the mean of `iters` calls.
std::array<double, 3> time_passes(const Operands& o, int iters) {
  std::array<double, 3> ms{};
  auto timed = [&](int slot, auto&& fn) {
    const auto t0 = Clock::now();
    for (int i = 0; i < iters; ++i) fn();
    ms[slot] = std::chrono::duration<double, std::milli>(Clock::now() - t0).count() / iters;
  };
  timed(0, [&] { K::conv2d_forward(o.x, o.w, Tensor(), o.p); });
  timed(1, [&] { K::conv2d_backward(o.grad_y, Tensor(), o.w, o.x.shape(), o.p, {true, false, false}); });
  timed(2, [&] { K::conv2d_backward(o.grad_y, o.x, o.w, o.x.shape(), o.p, {false, true, false}); });
  return ms;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void run_shape(const ConvShape& s, int reps, int iters) {
  const Operands f32 = make_operands(s, DType::FLOAT32);
  const Operands b16 = make_operands(s, DType::BFLOAT16);
  time_passes(f32, 1);  // primitives created
  time_passes(b16, 1);
  std::array<std::vector<double>, 3> tf, tb;
  std::vector<double> total_ratio;
  for (int r = 0; r < reps; ++r) {
    const auto a = time_passes(f32, iters);
    const auto b = time_passes(b16, iters);
    for (int i = 0; i < 3; ++i) {
      tf[i].push_back(a[i]);
      tb[i].push_back(b[i]);
    }
    total_ratio.push_back((a[0] + a[1] + a[2]) / (b[0] + b[1] + b[2]));
  }
  std::printf("| %lld,%lld,%lld,%lldx%lld,%lldx%lld |", (long long)s.n, (long long)s.c, (long long)s.o,
              (long long)s.size, (long long)s.size, (long long)s.k, (long long)s.k);
  for (int i = 0; i < 3; ++i) {
    const double a = median(tf[i]), b = median(tb[i]);
    std::printf(" %.3f / %.3f (%.2fx) |", a, b, a / b);
  }
  std::printf(" %.2fx |\n", median(total_ratio));
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "A convolution's forward, backward-data and backward-weights passes: float32 against bfloat16"};
  std::vector<std::string> shapes{"32,64,64,8,3",  "32,128,128,4,3",  "32,256,256,2,3",  "32,512,512,1,3",
                                  "32,64,64,56,3", "32,128,128,28,3", "32,256,256,14,3", "32,512,512,7,3"};
  int reps = 7, iters = 3, threads = 1;
  app.add_option("--shapes", shapes,
                 "N,C,O,SIZE,K: batch, in and out channels, square input size, square kernel");
  app.add_option("--reps", reps, "repetitions (median reported)")->check(CLI::PositiveNumber);
  app.add_option("--iters", iters, "calls per timing")->check(CLI::PositiveNumber);
  app.add_option("--threads", threads, "compute threads")->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);
  std::vector<ConvShape> parsed;
  try {
    for (const auto& s : shapes) parsed.push_back(parse_shape(s));
  } catch (const CLI::Error& e) {
    return app.exit(e);
  }
  crew::set_num_threads(threads);
  std::printf("ms per call, float32 / bfloat16 (speed-up), %d thread(s), median of %d\n", threads, reps);
  std::printf("| N,C,O,size,k | forward | backward data | backward weights | all three |\n");
  std::printf("|---|---:|---:|---:|---:|\n");
  for (const auto& s : parsed) run_shape(s, reps, iters);
  return 0;
}
