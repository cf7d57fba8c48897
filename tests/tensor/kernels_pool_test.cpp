// oneDNN pooling kernels against the naive reference (padding, strides, odd sizes).
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <ostream>

#include "crew/tensor/kernels/pool.h"
#include "crew/tensor/kernels/pool_direct.h"
#include "crew/tensor/random.h"
#include "tests/tensor/kernels_reference.h"
#include "tests/testing/tensor_expect.h"

namespace crew {
namespace {

struct PoolCase {
  Shape x;
  kernels::Pool2dParams p;
};

void PrintTo(const PoolCase& c, std::ostream* os) {
  *os << "x" << shape_str(c.x) << " k" << c.p.kernel[0] << c.p.kernel[1] << " s" << c.p.stride[0]
      << c.p.stride[1] << " p" << c.p.padding[0] << c.p.padding[1];
}

// Distinct values (a shuffled ramp) so that every window has a unique maximum.
Tensor distinct_input(const Shape& s, uint64_t seed) {
  std::vector<float> v(shape_numel(s));
  std::iota(v.begin(), v.end(), 0.0f);
  Generator gen(seed);
  for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[gen.next_u64() % i]);
  for (float& f : v) f = f / static_cast<float>(v.size()) - 0.5f;
  return Tensor::from_vector(v, s);
}

void expect_close(const std::vector<double>& want, const Tensor& got, const char* what) {
  testing::expect_close(want, got, what, {.atol = 1e-5});
}

class PoolKernelTest : public ::testing::TestWithParam<PoolCase> {};

TEST_P(PoolKernelTest, MaxAndAverageMatchReferenceBothImplementations) {
  const PoolCase c = GetParam();
  Tensor x = distinct_input(c.x, 5);
  for (kernels::PoolImpl impl : {kernels::PoolImpl::DIRECT, kernels::PoolImpl::ONEDNN}) {
    for (kernels::PoolKind kind : {kernels::PoolKind::MAX, kernels::PoolKind::AVG}) {
      SCOPED_TRACE(::testing::Message()
                   << "impl " << static_cast<int>(impl) << " kind " << static_cast<int>(kind));
      kernels::PoolForwardResult r = kernels::pool2d_forward(kind, x, c.p, true, impl);
      ASSERT_EQ(r.y.shape(), kernels::pool2d_output_shape(c.x, c.p));
      expect_close(reference::pool2d(kind, x, c.p), r.y, "forward");
      Generator gen(9);
      Tensor gy = uniform(r.y.shape(), -1, 1, DType::FLOAT32, &gen);
      expect_close(reference::pool2d_backward(kind, x, gy, c.p),
                   kernels::pool2d_backward(kind, gy, c.x, r.workspace, c.p, impl), "backward");
      // Inference mode computes the same values.
      expect_close(reference::pool2d(kind, x, c.p), kernels::pool2d_forward(kind, x, c.p, false, impl).y,
                   "inference");
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, PoolKernelTest,
                         ::testing::Values(PoolCase{{2, 32, 26, 26}, {{2, 2}, {2, 2}, {0, 0}}},  // seed pool1
                                           PoolCase{{2, 64, 11, 11},
                                                    {{2, 2}, {2, 2}, {0, 0}}},  // odd: drops a row
                                           PoolCase{{1, 3, 7, 9}, {{3, 3}, {2, 2}, {1, 1}}},  // padding
                                           PoolCase{{2, 2, 5, 8}, {{2, 3}, {1, 2}, {1, 1}}},
                                           PoolCase{{1, 1, 6, 6}, {{3, 3}, {3, 3}, {0, 0}}}));

// The direct backward kernel gets an uninitialised grad_x and must write every element,
// including those no window covers (the dropped last row and column of an odd extent).
TEST(PoolKernelTest, DirectBackwardOverwritesItsWholeOutput) {
  const Shape xs{2, 3, 11, 9};
  const kernels::Pool2dParams p{{2, 2}, {2, 2}, {0, 0}};
  Tensor x = distinct_input(xs, 3);
  for (kernels::PoolKind kind : {kernels::PoolKind::MAX, kernels::PoolKind::AVG}) {
    kernels::PoolForwardResult r = kernels::pool2d_forward(kind, x, p, true, kernels::PoolImpl::DIRECT);
    Generator gen(4);
    Tensor gy = uniform(r.y.shape(), -1, 1, DType::FLOAT32, &gen);
    Tensor gx = Tensor::full(xs, std::nan(""));
    kernels::detail::pool2d_direct_backward(kind, gy, r.workspace, p, gx);
    expect_close(reference::pool2d_backward(kind, x, gy, p), gx,
                 kind == kernels::PoolKind::MAX ? "max" : "avg");
  }
}

// After a ReLU most windows hold ties (zeros): the direct 2x2 kernels, vectorised and not
// (row widths of 4, 5, 13 and 17 outputs: masked, full plus masked, several full blocks),
// must send the gradient to the first maximum in row-major order, as the reference does.
TEST(PoolKernelTest, DirectMaxPoolTiesGoToTheFirstMaximum) {
  const kernels::Pool2dParams p{{2, 2}, {2, 2}, {0, 0}};
  for (const Shape& xs :
       {Shape{2, 3, 9, 8}, Shape{2, 64, 11, 11}, Shape{2, 3, 26, 26}, Shape{1, 2, 35, 34}}) {
    SCOPED_TRACE(shape_str(xs));
    Generator gen(11);
    Tensor x = uniform(xs, -1, 1, DType::FLOAT32, &gen);
    float* v = x.data<float>();
    for (int64_t i = 0; i < x.numel(); ++i)
      v[i] = v[i] < 0 ? 0.0f : (v[i] < 0.3f ? 0.5f : v[i]);  // many ties
    kernels::PoolForwardResult r =
        kernels::pool2d_forward(kernels::PoolKind::MAX, x, p, true, kernels::PoolImpl::DIRECT);
    expect_close(reference::pool2d(kernels::PoolKind::MAX, x, p), r.y, "forward");
    Tensor gy = uniform(r.y.shape(), -1, 1, DType::FLOAT32, &gen);
    Tensor gx = Tensor::full(xs, std::nan(""));
    kernels::detail::pool2d_direct_backward(kernels::PoolKind::MAX, gy, r.workspace, p, gx);
    expect_close(reference::pool2d_backward(kernels::PoolKind::MAX, x, gy, p), gx, "backward");
  }
}

TEST(PoolKernelTest, RejectsBadConfigurations) {
  EXPECT_THROW(kernels::pool2d_output_shape({1, 1, 4, 4}, {{2, 2}, {0, 2}, {0, 0}}), ValueError);
  EXPECT_THROW(kernels::pool2d_output_shape({1, 1, 4, 4}, {{2, 2}, {2, 2}, {2, 2}}), ValueError);
  EXPECT_THROW(kernels::pool2d_output_shape({1, 4, 4}, {}), ValueError);
  EXPECT_THROW(kernels::pool2d_output_shape({1, 1, 1, 1}, {{3, 3}, {1, 1}, {0, 0}}), ValueError);
}

}  // namespace
}  // namespace crew
