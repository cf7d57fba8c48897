// The per-element and per-row math written once for host and device
// (crew/tensor/kernels/math/): each functor, in float32 and float64, against a float64 (or
// long double) reference on many inputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "crew/tensor/kernels/math/cross_entropy_row.h"
#include "crew/tensor/kernels/math/dropout_stream.h"
#include "crew/tensor/kernels/math/gelu.h"
#include "crew/tensor/kernels/math/layer_norm_row.h"

namespace crew::kernels::math {
namespace {

// Inputs spread over [-8, 8] plus the edges that matter (0, tiny, large).
std::vector<double> gelu_inputs() {
  std::vector<double> xs = {0.0, -0.0, 1e-30, -1e-30, 1e-8, -1e-8, 20.0, -20.0};
  for (int i = -4000; i <= 4000; ++i) xs.push_back(i / 500.0);
  return xs;
}

long double gelu_ref(long double x) { return 0.5L * x * (1 + std::erf(x / std::sqrt(2.0L))); }
long double gelu_grad_ref(long double x) {
  const long double pi = 3.141592653589793238462643383279502884L;
  return 0.5L * (1 + std::erf(x / std::sqrt(2.0L))) + x * std::exp(-0.5L * x * x) / std::sqrt(2 * pi);
}

TEST(KernelMath, GeluErfMatchesTheReference) {
  for (double x : gelu_inputs()) {
    const auto xf = static_cast<float>(x);
    EXPECT_NEAR(GeluErf<double>::forward(x), static_cast<double>(gelu_ref(x)), 1e-15 + 1e-14 * std::fabs(x))
        << x;
    EXPECT_NEAR(GeluErf<double>::derivative(x), static_cast<double>(gelu_grad_ref(x)), 1e-14) << x;
    EXPECT_NEAR(GeluErf<float>::forward(xf), static_cast<double>(gelu_ref(xf)), 1e-7 + 1e-6 * std::fabs(x))
        << x;
    EXPECT_NEAR(GeluErf<float>::derivative(xf), static_cast<double>(gelu_grad_ref(xf)), 1e-6) << x;
  }
}

TEST(KernelMath, GeluErfDerivativeIsTheSlopeOfForward) {
  for (int i = -300; i <= 300; ++i) {
    const double x = i / 50.0, h = 1e-6;
    const double slope = (GeluErf<double>::forward(x + h) - GeluErf<double>::forward(x - h)) / (2 * h);
    EXPECT_NEAR(GeluErf<double>::derivative(x), slope, 1e-8) << x;
  }
}

// A float64 layer-norm row: (x - mean) / sqrt(var + eps) * w + b.
std::vector<double> layer_norm_ref(const std::vector<double>& x, const std::vector<double>& w,
                                   const std::vector<double>& b, double eps) {
  double mean = 0, var = 0;
  for (double v : x) mean += v;
  mean /= static_cast<double>(x.size());
  for (double v : x) var += (v - mean) * (v - mean);
  var /= static_cast<double>(x.size());
  std::vector<double> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = (x[i] - mean) / std::sqrt(var + eps) * w[i] + b[i];
  return y;
}

template <typename T, typename S>
std::vector<T> as(const std::vector<S>& v) {
  return std::vector<T>(v.begin(), v.end());
}

template <typename T>
void check_layer_norm_row(double tol) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(-3, 3);
  for (int64_t cols : {1, 2, 7, 64, 333}) {
    for (int rep = 0; rep < 20; ++rep) {
      std::vector<double> x(cols), w(cols), b(cols), g(cols);
      for (int64_t c = 0; c < cols; ++c) x[c] = u(rng) + 5, w[c] = u(rng), b[c] = u(rng), g[c] = u(rng);
      const double eps = 1e-5;
      const std::vector<T> xt = as<T>(x), wt = as<T>(w), bt = as<T>(b), gt = as<T>(g);
      T mean, var;
      LayerNormRow<T>::stats(xt.data(), cols, mean, var);
      const T rstd = LayerNormRow<T>::rstd(var, T(eps));
      std::vector<T> y(cols);
      LayerNormRow<T>::normalize(xt.data(), cols, mean, rstd, wt.data(), bt.data(), y.data());
      const std::vector<double> want = layer_norm_ref(as<double>(xt), as<double>(wt), as<double>(bt), eps);
      for (int64_t c = 0; c < cols; ++c) ASSERT_NEAR(y[c], want[c], tol * (1 + std::fabs(want[c]))) << cols;
      // Backward of sum(g * y) against central differences of the float64 reference.
      std::vector<T> dx(cols), dw(cols, T(0)), db(cols, T(0));
      LayerNormRow<T>::backward(gt.data(), xt.data(), cols, mean, rstd, wt.data(), dx.data(), dw.data(),
                                db.data());
      std::vector<double> xd = as<double>(xt);
      const std::vector<double> xhat =
          layer_norm_ref(xd, std::vector<double>(cols, 1.0), std::vector<double>(cols, 0.0), eps);
      const double h = 1e-6;
      for (int64_t c = 0; c < cols; ++c) {
        auto loss = [&](double xc) {
          std::vector<double> xs = xd;
          xs[c] = xc;
          const std::vector<double> ys = layer_norm_ref(xs, as<double>(wt), as<double>(bt), eps);
          double s = 0;
          for (int64_t j = 0; j < cols; ++j) s += static_cast<double>(gt[j]) * ys[j];
          return s;
        };
        const double fd = (loss(xd[c] + h) - loss(xd[c] - h)) / (2 * h);
        ASSERT_NEAR(dx[c], fd, std::max(100 * tol, 1e-5) * (1 + std::fabs(fd)))
            << "dx " << c << " of " << cols;
        ASSERT_NEAR(dw[c], gt[c] * xhat[c], 10 * tol * (1 + std::fabs(gt[c] * xhat[c]))) << "dw " << c;
        ASSERT_EQ(db[c], gt[c]) << "db " << c;
      }
    }
  }
}

TEST(KernelMath, LayerNormRowMatchesTheReference) {
  check_layer_norm_row<double>(1e-9);
  check_layer_norm_row<float>(1e-5);
}

TEST(KernelMath, LayerNormRowWithoutWeightAndBias) {
  const std::vector<double> x = {1, 2, 4, 8};
  double mean, var;
  LayerNormRow<double>::stats(x.data(), 4, mean, var);
  EXPECT_DOUBLE_EQ(mean, 3.75);
  EXPECT_DOUBLE_EQ(var, (2.75 * 2.75 + 1.75 * 1.75 + 0.25 * 0.25 + 4.25 * 4.25) / 4);
  std::vector<double> y(4);
  LayerNormRow<double>::normalize(x.data(), 4, mean, LayerNormRow<double>::rstd(var, 0), nullptr, nullptr,
                                  y.data());
  const std::vector<double> want = layer_norm_ref(x, {1, 1, 1, 1}, {0, 0, 0, 0}, 0);
  for (int c = 0; c < 4; ++c) EXPECT_NEAR(y[c], want[c], 1e-15);
}

template <typename T>
void check_cross_entropy_row(double tol) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(-20, 20);
  for (int64_t k : {1, 2, 10, 1000}) {
    for (int rep = 0; rep < 50; ++rep) {
      std::vector<double> x(k);
      for (double& v : x) v = u(rng);
      const std::vector<T> xt = as<T>(x);
      const int64_t label = rep == 0 ? kIgnoreIndex : static_cast<int64_t>(rng() % k);
      std::vector<T> probs(k);
      const T loss = CrossEntropyRow<T>::forward(xt.data(), label, k, probs.data());
      // float64 reference: log-sum-exp around the maximum.
      double mx = -INFINITY, total = 0;
      for (T v : xt) mx = std::max(mx, static_cast<double>(v));
      for (T v : xt) total += std::exp(v - mx);
      const double lse = mx + std::log(total);
      ASSERT_NEAR(loss, label == kIgnoreIndex ? 0.0 : lse - xt[label], tol * (1 + std::fabs(lse))) << k;
      std::vector<double> want(k);
      for (int64_t j = 0; j < k; ++j) {
        want[j] = std::exp(xt[j] - lse);
        ASSERT_NEAR(probs[j], want[j], tol) << k << " " << j;
      }
      const double g = 0.5 + rep;
      CrossEntropyRow<T>::backward(probs.data(), label, k, static_cast<T>(g));
      for (int64_t j = 0; j < k; ++j) {
        const double ref = label == kIgnoreIndex ? 0.0 : g * (want[j] - (j == label ? 1.0 : 0.0));
        ASSERT_NEAR(probs[j], ref, tol * (1 + std::fabs(g))) << k << " " << j;
      }
    }
  }
}

TEST(KernelMath, CrossEntropyRowMatchesTheReference) {
  check_cross_entropy_row<double>(1e-12);
  check_cross_entropy_row<float>(2e-5);
}

// The sequential SplitMix64 generator dropout has always drawn from.
uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

TEST(KernelMath, DropoutStreamIsTheSequentialGeneratorElementByElement) {
  for (uint64_t seed : {0ull, 1ull, 42ull, 0xFFFFFFFFFFFFFFFFull, 0x123456789ABCDEFull}) {
    uint64_t state = seed;
    const DropoutStream stream{seed};
    for (uint64_t i = 0; i < 10000; ++i) ASSERT_EQ(stream.draw(i), splitmix64(state)) << seed << " " << i;
  }
}

TEST(KernelMath, DropoutStreamKeepsAboutOneMinusP) {
  const DropoutStream stream{2024};
  for (double p : {0.1, 0.5, 0.9}) {
    const uint64_t threshold = DropoutStream::threshold(p);
    int64_t kept = 0;
    const int64_t n = 200000;
    for (int64_t i = 0; i < n; ++i) kept += stream.keep(static_cast<uint64_t>(i), p, threshold);
    EXPECT_NEAR(static_cast<double>(kept) / n, 1 - p, 0.01) << p;
  }
  EXPECT_FALSE(stream.keep(0, 1.0, DropoutStream::threshold(1.0)));
  EXPECT_TRUE(stream.keep(0, 0.0, DropoutStream::threshold(0.0)));
}

}  // namespace
}  // namespace crew::kernels::math
