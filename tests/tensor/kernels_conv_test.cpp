// oneDNN convolution kernels against the naive double-precision reference, on odd shapes.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <ostream>

#include "crew/tensor/kernels/conv.h"
#include "crew/tensor/random.h"
#include "tests/tensor/kernels_reference.h"
#include "tests/testing/tensor_expect.h"

namespace crew {
namespace {

struct ConvCase {
  Shape x, w;
  kernels::Conv2dParams p;
  bool bias;
};

void PrintTo(const ConvCase& c, std::ostream* os) {
  *os << "x" << shape_str(c.x) << " w" << shape_str(c.w) << " s" << c.p.stride[0] << c.p.stride[1] << " p"
      << c.p.padding[0] << c.p.padding[1] << " d" << c.p.dilation[0] << c.p.dilation[1] << " g" << c.p.groups;
}

void expect_close(const std::vector<double>& want, const Tensor& got, const char* what) {
  testing::expect_close(want, got, what, {.atol = 1e-4, .rtol = 1e-4});
}

class ConvKernelTest : public ::testing::TestWithParam<ConvCase> {};

// Uniform [-1, 1) input, weight and (if the case has one) bias for a case.
struct ConvInputs {
  Tensor x, w, b;
};
ConvInputs random_inputs(const ConvCase& c, Generator& gen) {
  ConvInputs in;
  in.x = uniform(c.x, -1, 1, DType::FLOAT32, &gen);
  in.w = uniform(c.w, -1, 1, DType::FLOAT32, &gen);
  in.b = c.bias ? uniform({c.w[0]}, -1, 1, DType::FLOAT32, &gen) : Tensor();
  return in;
}

TEST_P(ConvKernelTest, MatchesReference) {
  const ConvCase c = GetParam();
  Generator gen(17);
  auto [x, w, b] = random_inputs(c, gen);
  Tensor y = kernels::conv2d_forward(x, w, b, c.p);
  ASSERT_EQ(y.shape(), kernels::conv2d_output_shape(c.x, c.w, c.p));
  expect_close(reference::conv2d(x, w, b, c.p), y, "forward");

  Tensor gy = uniform(y.shape(), -1, 1, DType::FLOAT32, &gen);
  expect_close(reference::conv2d_backward_data(gy, w, c.x, c.p),
               kernels::conv2d_backward_data(gy, w, c.x, c.p), "backward data");
  Tensor gw = Tensor::empty(c.w);
  Tensor gb = c.bias ? Tensor::empty({c.w[0]}) : Tensor();
  kernels::conv2d_backward_weights(gy, x, c.p, gw, gb);
  expect_close(reference::conv2d_backward_weights(gy, x, c.w, c.p), gw, "backward weights");
  if (c.bias) {
    const std::vector<double> g = gy.to_vector<double>();
    std::vector<double> want(c.w[0], 0.0);
    const int64_t plane = y.size(2) * y.size(3);
    for (size_t i = 0; i < g.size(); ++i) want[(i / plane) % c.w[0]] += g[i];
    expect_close(want, gb, "backward bias");
  }
}

// conv2d_backward (both passes at once, sharing grad_y's layout change and the input kept by
// the forward pass) gives the same gradients as the passes run alone, with and without
// the forward's saved state, and for each subset of the gradients.
TEST_P(ConvKernelTest, CombinedBackwardMatchesSeparatePasses) {
  const ConvCase c = GetParam();
  Generator gen(23);
  auto [x, w, b] = random_inputs(c, gen);
  std::shared_ptr<const kernels::Conv2dSaved> saved;
  Tensor y = kernels::conv2d_forward(x, w, b, c.p, &saved);
  ASSERT_NE(saved, nullptr);
  expect_close(kernels::conv2d_forward(x, w, b, c.p).to_vector<double>(), y, "forward with saved state");
  Tensor gy = uniform(y.shape(), -1, 1, DType::FLOAT32, &gen);

  const std::vector<double> want_x = kernels::conv2d_backward_data(gy, w, c.x, c.p).to_vector<double>();
  Tensor gw = Tensor::empty(c.w);
  Tensor gb = c.bias ? Tensor::empty({c.w[0]}) : Tensor();
  kernels::conv2d_backward_weights(gy, x, c.p, gw, gb);
  for (const std::shared_ptr<const kernels::Conv2dSaved>& state :
       {saved, std::shared_ptr<const kernels::Conv2dSaved>()}) {
    kernels::Conv2dGrads r = kernels::conv2d_backward(gy, x, w, c.x, c.p, {.bias = c.bias}, state);
    expect_close(want_x, r.grad_x, "combined: grad_x");
    expect_close(gw.to_vector<double>(), r.grad_weight, "combined: grad_weight");
    ASSERT_EQ(r.grad_bias.defined(), c.bias);
    if (c.bias) expect_close(gb.to_vector<double>(), r.grad_bias, "combined: grad_bias");
  }
  kernels::Conv2dGrads only_x = kernels::conv2d_backward(gy, Tensor(), w, c.x, c.p, {.weights = false});
  expect_close(want_x, only_x.grad_x, "data pass only");
  EXPECT_FALSE(only_x.grad_weight.defined());
  kernels::Conv2dGrads only_w =
      kernels::conv2d_backward(gy, x, w, c.x, c.p, {.data = false, .bias = c.bias}, saved);
  EXPECT_FALSE(only_w.grad_x.defined());
  expect_close(gw.to_vector<double>(), only_w.grad_weight, "weight pass only");
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, ConvKernelTest,
    ::testing::Values(ConvCase{{2, 1, 28, 28}, {32, 1, 3, 3}, {}, true},    // the seed's conv1
                      ConvCase{{3, 32, 13, 13}, {64, 32, 3, 3}, {}, true},  // the seed's conv2
                      ConvCase{{2, 4, 11, 9},
                               {6, 2, 3, 3},
                               {{2, 2}, {1, 1}, {2, 2}, 2},
                               true},  // stride 2, pad 1, dil 2, groups 2
                      ConvCase{{1, 3, 7, 10}, {5, 3, 2, 4}, {{1, 3}, {0, 2}, {1, 1}, 1}, false},
                      ConvCase{{2, 6, 9, 9}, {6, 1, 3, 3}, {{1, 1}, {1, 1}, {1, 1}, 6}, true}));  // depthwise

TEST(ConvKernelTest, RejectsBadConfigurations) {
  EXPECT_THROW(kernels::conv2d_output_shape({1, 3, 8, 8}, {4, 2, 3, 3}, {}), ValueError);  // channels
  EXPECT_THROW(kernels::conv2d_output_shape({1, 3, 2, 2}, {4, 3, 3, 3}, {}), ValueError);  // kernel too big
  EXPECT_THROW(kernels::conv2d_output_shape({1, 3, 8}, {4, 3, 3, 3}, {}), ValueError);     // rank
  kernels::Conv2dParams bad;
  bad.stride = {0, 1};
  EXPECT_THROW(kernels::conv2d_output_shape({1, 3, 8, 8}, {4, 3, 3, 3}, bad), ValueError);
  EXPECT_THROW(kernels::conv2d_forward(Tensor::zeros({1, 3, 8, 8}, DType::FLOAT64),
                                       Tensor::zeros({4, 3, 3, 3}), Tensor(), {}),
               ValueError);
}

TEST(ConvKernelTest, RepeatedCallsReuseTheCachedPrimitive) {
  Generator gen(3);
  Tensor x = uniform({2, 3, 9, 9}, -1, 1, DType::FLOAT32, &gen);
  Tensor w = uniform({4, 3, 3, 3}, -1, 1, DType::FLOAT32, &gen);
  const std::vector<float> first = kernels::conv2d_forward(x, w, Tensor(), {}).to_vector<float>();
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(kernels::conv2d_forward(x, w, Tensor(), {}).to_vector<float>(), first);
}

}  // namespace
}  // namespace crew
