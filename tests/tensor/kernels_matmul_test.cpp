// OpenBLAS matmul, broadcasting kernels, oneDNN activations and the thread setting.
#include <gtest/gtest.h>

#include <cmath>

#include "crew/tensor/kernels/activation.h"
#include "crew/tensor/kernels/broadcast.h"
#include "crew/tensor/kernels/gemm.h"
#include "crew/tensor/kernels/threading.h"
#include "crew/tensor/random.h"

namespace crew {
namespace {

std::vector<double> naive_matmul(const Tensor& a, const Tensor& b, bool ta, bool tb) {
  const auto av = a.to_vector<double>(), bv = b.to_vector<double>();
  const int64_t m = ta ? a.size(1) : a.size(0), k = ta ? a.size(0) : a.size(1);
  const int64_t n = tb ? b.size(0) : b.size(1);
  std::vector<double> c(m * n, 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t p = 0; p < k; ++p)
        c[i * n + j] += av[ta ? p * m + i : i * k + p] * bv[tb ? j * k + p : p * n + j];
  return c;
}

TEST(MatmulKernelTest, AllTransposesOnOddShapes) {
  Generator gen(1);
  for (DType dt : {DType::FLOAT32, DType::FLOAT64}) {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        Tensor a = uniform(ta ? Shape{37, 19} : Shape{19, 37}, -1, 1, dt, &gen);
        Tensor b = uniform(tb ? Shape{23, 37} : Shape{37, 23}, -1, 1, dt, &gen);
        const std::vector<double> want = naive_matmul(a, b, ta, tb);
        const std::vector<double> got = kernels::matmul(a, b, ta, tb).to_vector<double>();
        ASSERT_EQ(got.size(), want.size());
        for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-4) << ta << tb << " " << i;
      }
    }
  }
}

TEST(MatmulKernelTest, BatchedMatchesPerSlice) {
  Generator gen(2);
  Tensor a = uniform({3, 4, 5}, -1, 1, DType::FLOAT32, &gen);
  Tensor b = uniform({3, 5, 2}, -1, 1, DType::FLOAT32, &gen);
  Tensor c = kernels::matmul(a, b, false, false);
  ASSERT_EQ(c.shape(), (Shape{3, 4, 2}));
  for (int64_t i = 0; i < 3; ++i) {
    const std::vector<double> want = naive_matmul(a.select(i), b.select(i), false, false);
    const std::vector<double> got = c.select(i).to_vector<double>();
    for (size_t j = 0; j < got.size(); ++j) ASSERT_NEAR(got[j], want[j], 1e-5);
  }
  EXPECT_THROW(kernels::matmul(a, Tensor::zeros({3, 4, 2}), false, false), ValueError);
}

TEST(BroadcastKernelTest, ShapesAndSumTo) {
  EXPECT_EQ(kernels::broadcast_shapes({2, 3, 4}, {3, 1}, "t"), (Shape{2, 3, 4}));
  EXPECT_EQ(kernels::broadcast_shapes({}, {5}, "t"), (Shape{5}));
  EXPECT_THROW(kernels::broadcast_shapes({2, 3}, {4}, "t"), ValueError);
  Tensor a = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor b = Tensor::from_vector<float>({10, 20}, {2, 1});
  EXPECT_EQ(kernels::binary(kernels::BinaryOp::SUB, a, b, "t").to_vector<float>(),
            (std::vector<float>{-9, -8, -7, -16, -15, -14}));
  EXPECT_EQ(kernels::binary(kernels::BinaryOp::MUL, b, a, "t").to_vector<float>(),
            (std::vector<float>{10, 20, 30, 80, 100, 120}));
  EXPECT_EQ(kernels::sum_to(a, {3}).to_vector<float>(), (std::vector<float>{5, 7, 9}));
  EXPECT_EQ(kernels::sum_to(a, {2, 1}).to_vector<float>(), (std::vector<float>{6, 15}));
  EXPECT_EQ(kernels::sum_to(a, {}).to_vector<float>(), (std::vector<float>{21}));
}

TEST(ActivationKernelTest, Float32OneDnnMatchesFloat64Loops) {
  Generator gen(4);
  Tensor x64 = uniform({3, 7, 5}, -3, 3, DType::FLOAT64, &gen);
  Tensor x32 = x64.to(DType::FLOAT32);
  Tensor g64 = uniform(x64.shape(), -1, 1, DType::FLOAT64, &gen);
  Tensor g32 = g64.to(DType::FLOAT32);
  for (auto kind : {kernels::Activation::RELU, kernels::Activation::SIGMOID, kernels::Activation::TANH,
                    kernels::Activation::GELU_ERF, kernels::Activation::GELU_TANH}) {
    Tensor y64 = kernels::activation_forward(kind, x64);
    Tensor y32 = kernels::activation_forward(kind, x32);
    const auto a = y64.to_vector<double>(), b = y32.to_vector<double>();
    for (size_t i = 0; i < a.size(); ++i) ASSERT_NEAR(a[i], b[i], 1e-5) << static_cast<int>(kind) << " " << i;
    const auto ga = kernels::activation_backward(kind, g64, x64, y64).to_vector<double>();
    const auto gb = kernels::activation_backward(kind, g32, x32, y32).to_vector<double>();
    for (size_t i = 0; i < ga.size(); ++i)
      ASSERT_NEAR(ga[i], gb[i], 1e-5) << static_cast<int>(kind) << " " << i;
  }
  const auto r =
      kernels::activation_forward(kernels::Activation::RELU, Tensor::from_vector<float>({-1, 0, 2}, {3}));
  EXPECT_EQ(r.to_vector<float>(), (std::vector<float>{0, 0, 2}));
}

TEST(ThreadingTest, SetAndGet) {
  const int before = get_num_threads();
  EXPECT_GE(before, 1);
  set_num_threads(1);
  EXPECT_EQ(get_num_threads(), 1);
  Generator gen(5);
  Tensor a = uniform({64, 64}, -1, 1, DType::FLOAT32, &gen);
  const auto one = kernels::matmul(a, a, false, false).to_vector<float>();
  set_num_threads(2);
  EXPECT_EQ(get_num_threads(), 2);
  const auto two = kernels::matmul(a, a, false, false).to_vector<float>();
  for (size_t i = 0; i < one.size(); ++i) ASSERT_NEAR(one[i], two[i], 1e-4);
  EXPECT_THROW(set_num_threads(0), ValueError);
  set_num_threads(before);
}

TEST(ThreadingTest, ParallelForCoversTheRangeExactlyOnce) {
  const int before = get_num_threads();
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    for (int64_t n : {0, 1, 7, 100, 1001}) {
      std::vector<int> hits(n, 0);
      detail::parallel_for(n, 4, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) ++hits[i];
      });
      for (int64_t i = 0; i < n; ++i)
        ASSERT_EQ(hits[i], 1) << "n=" << n << " i=" << i << " threads=" << threads;
    }
  }
  set_num_threads(before);
}

}  // namespace
}  // namespace crew
