// The bfloat16 / float16 kernels against their float32 references, run on the same (rounded)
// inputs: matmul, linear, conv2d forward and backward, relu, gelu, softmax, max and average
// pooling, batch norm (bfloat16; float32 statistics). bfloat16 keeps 8
// significant bits (relative rounding 2^-9), float16 11 (2^-12); the kernels accumulate in
// float32 and round once, so each result is within ~1e-2 (bf16) / ~2e-3 (fp16) of the float32
// one, relative to the result's largest magnitude. The LowPrecisionAvx2 suite runs again under
// ONEDNN_MAX_CPU_ISA=AVX2 (ctest tensor.low_precision_avx2): no bfloat16 kernels there.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>

#include "crew/tensor/kernels/activation.h"
#include "crew/tensor/kernels/batch_norm.h"
#include "crew/tensor/kernels/conv.h"
#include "crew/tensor/kernels/gemm.h"
#include "crew/tensor/kernels/linear.h"
#include "crew/tensor/kernels/low_precision.h"
#include "crew/tensor/kernels/pool.h"
#include "crew/tensor/kernels/softmax.h"
#include "crew/tensor/random.h"
#include "tests/testing/low_precision.h"

namespace crew {

// Test names and failure messages show "bfloat16", not the enum's byte.
void PrintTo(DType dtype, std::ostream* os) { *os << dtype_name(dtype); }

namespace {

double tolerance(DType dtype) { return dtype == DType::BFLOAT16 ? 1e-2 : 2e-3; }

// |got - want| <= tol * max|want| elementwise, got of `dtype`, want float32.
void expect_close(const Tensor& got, const Tensor& want, DType dtype, const std::string& what) {
  testing::expect_close_to_float32(got, want, dtype, tolerance(dtype), what);
}

// A random tensor of `dtype`, and the same values in float32 (exactly: the 16-bit values are floats).
std::pair<Tensor, Tensor> random_pair(const Shape& shape, DType dtype, Generator* gen) {
  const Tensor low = uniform(shape, -1, 1, DType::FLOAT32, gen).to(dtype);
  return {low, low.to(DType::FLOAT32)};
}

class LowPrecision : public ::testing::TestWithParam<DType> {};

TEST_P(LowPrecision, MatmulMatchesFloat32) {
  const DType dt = GetParam();
  Generator gen(11);
  struct Case {
    Shape a, b;
    bool ta, tb;
  };
  for (const Case& c :
       {Case{{19, 37}, {37, 23}, false, false}, Case{{37, 19}, {23, 37}, true, true},
        Case{{3, 5, 16, 8}, {3, 5, 8, 12}, false, false}, Case{{4, 7, 33}, {33, 9}, false, false},
        Case{{2, 6, 10}, {1, 6, 10}, true, false}, Case{{5, 0}, {0, 3}, false, false}}) {
    auto [a, a32] = random_pair(c.a, dt, &gen);
    auto [b, b32] = random_pair(c.b, dt, &gen);
    expect_close(kernels::matmul(a, b, c.ta, c.tb), kernels::matmul(a32, b32, c.ta, c.tb), dt,
                 "matmul " + shape_str(c.a) + shape_str(c.b));
  }
}

TEST_P(LowPrecision, LinearForwardAndBackwardMatchFloat32) {
  const DType dt = GetParam();
  Generator gen(12);
  auto [x, x32] = random_pair({4, 6, 40}, dt, &gen);
  auto [w, w32] = random_pair({40, 24}, dt, &gen);
  auto [b, b32] = random_pair({24}, dt, &gen);
  auto [g, g32] = random_pair({4, 6, 24}, dt, &gen);
  expect_close(kernels::linear_forward(x, w, b), kernels::linear_forward(x32, w32, b32), dt, "linear");
  expect_close(kernels::linear_forward(x, w, Tensor()), kernels::linear_forward(x32, w32, Tensor()), dt,
               "linear without bias");
  const auto grads = kernels::linear_backward(g, x, w, {});
  const auto want = kernels::linear_backward(g32, x32, w32, {});
  const char* names[] = {"d x", "d weight", "d bias"};
  for (int i = 0; i < 3; ++i) expect_close(grads[i], want[i], dt, std::string("linear ") + names[i]);
}

TEST_P(LowPrecision, Conv2dForwardAndBackwardMatchFloat32) {
  const DType dt = GetParam();
  Generator gen(13);
  kernels::Conv2dParams p;
  p.stride = {2, 1};
  p.padding = {1, 1};
  auto [x, x32] = random_pair({2, 16, 9, 8}, dt, &gen);
  auto [w, w32] = random_pair({32, 16, 3, 3}, dt, &gen);
  auto [b, b32] = random_pair({32}, dt, &gen);
  const Tensor y = kernels::conv2d_forward(x, w, b, p);
  const Tensor y32 = kernels::conv2d_forward(x32, w32, b32, p);
  expect_close(y, y32, dt, "conv2d forward");
  auto [g, g32] = random_pair(y32.shape(), dt, &gen);
  const kernels::Conv2dGrads r = kernels::conv2d_backward(g, x, w, x.shape(), p);
  const kernels::Conv2dGrads r32 = kernels::conv2d_backward(g32, x32, w32, x32.shape(), p);
  expect_close(r.grad_x, r32.grad_x, dt, "conv2d d x");
  expect_close(r.grad_weight, r32.grad_weight, dt, "conv2d d weight");
  expect_close(r.grad_bias, r32.grad_bias, dt, "conv2d d bias");
}

TEST_P(LowPrecision, ActivationsAndSoftmaxMatchFloat32) {
  const DType dt = GetParam();
  Generator gen(14);
  auto [x, x32] = random_pair({8, 50}, dt, &gen);
  auto [g, g32] = random_pair({8, 50}, dt, &gen);
  for (kernels::Activation kind : {kernels::Activation::RELU, kernels::Activation::GELU_TANH}) {
    const Tensor y = kernels::activation_forward(kind, x);
    const Tensor y32 = kernels::activation_forward(kind, x32);
    expect_close(y, y32, dt, "activation");
    expect_close(kernels::activation_backward(kind, g, x, y, false),
                 kernels::activation_backward(kind, g32, x32, y.to(DType::FLOAT32), false), dt,
                 "activation backward");
  }
  const Tensor s = kernels::softmax_forward(x, 1, false);
  expect_close(s, kernels::softmax_forward(x32, 1, false), dt, "softmax");
  expect_close(kernels::softmax_backward(g, s, 1, false),
               kernels::softmax_backward(g32, s.to(DType::FLOAT32), 1, false), dt, "softmax backward");
}

// Max and average pooling, forward and backward, of a row-major input (8 channels: oneDNN's
// blocked kernel; 3: its plain one) and of a conv's output in oneDNN's blocked layout (what
// ResNet-18 pools), with padding: the output keeps the 16-bit dtype, no float32 round trip.
TEST_P(LowPrecision, PoolingForwardAndBackwardMatchFloat32) {
  const DType dt = GetParam();
  Generator gen(15);
  const kernels::Pool2dParams p{{3, 3}, {2, 2}, {1, 1}};
  const Tensor w = random_pair({16, 8, 3, 3}, dt, &gen).first;
  const std::vector<Tensor> inputs = {
      random_pair({2, 8, 9, 7}, dt, &gen).first, random_pair({2, 3, 8, 8}, dt, &gen).first,
      kernels::conv2d_forward(random_pair({2, 8, 9, 9}, dt, &gen).first, w, Tensor(), {})};
  for (const Tensor& x : inputs) {
    for (kernels::PoolKind kind : {kernels::PoolKind::MAX, kernels::PoolKind::AVG}) {
      const std::string what =
          std::string(kind == kernels::PoolKind::MAX ? "max" : "avg") + "_pool2d " + shape_str(x.shape());
      const kernels::PoolForwardResult r = kernels::pool2d_forward(kind, x, p, true);
      // The float32 reference pools the 16-bit input's own values (the conv's rounded output).
      const kernels::PoolForwardResult r32 = kernels::pool2d_forward(kind, x.to(DType::FLOAT32), p, true);
      expect_close(r.y, r32.y, dt, what);
      auto [g, g32] = random_pair(r32.y.shape(), dt, &gen);
      const Tensor dx = kernels::pool2d_backward(kind, g, x.shape(), r.workspace, p,
                                                 kernels::default_pool_impl(), r.x_layout);
      expect_close(dx, kernels::pool2d_backward(kind, g32, x.shape(), r32.workspace, p), dt,
                   what + " backward");
    }
  }
}

// Batch norm in training (oneDNN's bf16 kernel: bfloat16 data, float32 statistics, weight and
// bias) of a row-major input and of a bf16 conv's blocked output, forward and backward.
TEST(LowPrecisionBatchNorm, BFloat16TrainingMatchesFloat32) {
  if (!kernels::dnnl_supports(DType::BFLOAT16, "batch_norm")) GTEST_SKIP() << "no bfloat16 kernels here";
  const DType dt = DType::BFLOAT16;
  Generator gen(16);
  const Tensor w = random_pair({16, 8, 3, 3}, dt, &gen).first;
  const Tensor scale = uniform({16}, 0.5, 1.5, DType::FLOAT32, &gen),
               shift = uniform({16}, -1, 1, DType::FLOAT32, &gen);
  for (const Tensor& x :
       {random_pair({4, 16, 5, 6}, dt, &gen).first,
        kernels::conv2d_forward(random_pair({4, 8, 7, 7}, dt, &gen).first, w, Tensor(), {})}) {
    const Tensor x32 = x.to(DType::FLOAT32);
    ASSERT_TRUE(kernels::batch_norm_supported(x));
    kernels::BatchNormStats stats, stats32;
    const Tensor y = kernels::batch_norm_forward(x, scale, shift, 1e-5, stats);
    const Tensor y32 = kernels::batch_norm_forward(x32, scale, shift, 1e-5, stats32);
    expect_close(y, y32, dt, "batch_norm " + shape_str(x.shape()));
    expect_close(stats.mean, stats32.mean, DType::FLOAT32, "batch_norm mean (float32)");
    expect_close(stats.variance, stats32.variance, DType::FLOAT32, "batch_norm variance (float32)");
    auto [g, g32] = random_pair(x.shape(), dt, &gen);
    const kernels::BatchNormGrads r = kernels::batch_norm_backward(g, x, scale, shift, 1e-5, stats);
    const kernels::BatchNormGrads r32 = kernels::batch_norm_backward(g32, x32, scale, shift, 1e-5, stats32);
    expect_close(r.x, r32.x, dt, "batch_norm d x");
    expect_close(r.weight, r32.weight, DType::FLOAT32, "batch_norm d weight (float32)");
    expect_close(r.bias, r32.bias, DType::FLOAT32, "batch_norm d bias (float32)");
  }
}

TEST_P(LowPrecision, MixedDtypesAreADTypeError) {
  const DType dt = GetParam();
  const Tensor a = Tensor::ones({4, 4}, dt), b = Tensor::ones({4, 4});
  EXPECT_THROW(kernels::matmul(a, b, false, false), DTypeError);
  try {
    kernels::conv2d_forward(Tensor::ones({1, 2, 3, 3}, dt), Tensor::ones({2, 2, 1, 1}), Tensor(), {});
    FAIL() << "expected DTypeError";
  } catch (const DTypeError& e) {
    EXPECT_NE(std::string(e.what()).find("conv2d"), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, LowPrecision, ::testing::Values(DType::BFLOAT16, DType::FLOAT16),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

// Under ONEDNN_MAX_CPU_ISA=AVX2 (set by the ctest tensor.low_precision_avx2) oneDNN has no
// bfloat16 kernels: the ops still give the right results, after one warning that says why
// they are slow.
TEST(LowPrecisionAvx2, FallsBackToFloat32WithOneWarning) {
  const char* isa = std::getenv("ONEDNN_MAX_CPU_ISA");
  if (isa == nullptr || std::string(isa) != "AVX2") GTEST_SKIP() << "runs under ONEDNN_MAX_CPU_ISA=AVX2";
  Generator gen(15);
  auto [a, a32] = random_pair({16, 24}, DType::BFLOAT16, &gen);
  auto [w, w32] = random_pair({24, 8}, DType::BFLOAT16, &gen);
  ::testing::internal::CaptureStderr();
  const bool supported = kernels::dnnl_supports(DType::BFLOAT16, "matmul");
  const Tensor y = kernels::matmul(a, w, false, false);
  const Tensor z = kernels::linear_forward(a, w, Tensor());
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_FALSE(supported);
  expect_close(y, kernels::matmul(a32, w32, false, false), DType::BFLOAT16, "matmul on AVX2");
  expect_close(z, kernels::linear_forward(a32, w32, Tensor()), DType::BFLOAT16, "linear on AVX2");
  size_t count = 0;
  for (size_t at = log.find("is slow:"); at != std::string::npos; at = log.find("is slow:", at + 1)) ++count;
  EXPECT_EQ(count, 1u) << log;
  EXPECT_NE(log.find("no AVX-512"), std::string::npos) << log;
}

}  // namespace
}  // namespace crew
