// Gradient checks and values of activations, softmax, log_softmax, flatten, dropout.
#include <cmath>

#include "crew/tensor/kernels/activation.h"
#include "tests/nn/functional_test_util.h"

namespace crew {
namespace {

using namespace nn::functional_testing;

TEST(FunctionalActivationTest, GradientsFloat64) {
  Tensor x = random_input({3, 5});
  expect_gradients_match([](const Inputs& in) { return F::relu(in[0]); }, {x});
  expect_gradients_match([](const Inputs& in) { return F::sigmoid(in[0]); }, {x});
  expect_gradients_match([](const Inputs& in) { return F::tanh(in[0]); }, {x});
  expect_gradients_match([](const Inputs& in) { return F::gelu(in[0]); }, {x});
  expect_gradients_match([](const Inputs& in) { return F::gelu(in[0], true); }, {x});
}

TEST(FunctionalActivationTest, GradientsFloat32OneDnn) {
  Tensor x = random_input({4, 6}, DType::FLOAT32);
  for (int kind = 0; kind < 5; ++kind) {
    expect_gradients_match(
        [kind](const Inputs& in) {
          switch (kind) {
            case 0:
              return F::relu(in[0]);
            case 1:
              return F::sigmoid(in[0]);
            case 2:
              return F::tanh(in[0]);
            case 3:
              return F::gelu(in[0]);
            default:
              return F::gelu(in[0], true);
          }
        },
        {x}, testing::float32_options());
  }
}

Tensor apply_activation(int kind, const Tensor& x) {
  switch (kind) {
    case 0:
      return F::relu(x);
    case 1:
      return F::sigmoid(x);
    case 2:
      return F::tanh(x);
    case 3:
      return F::gelu(x);
    default:
      return F::gelu(x, true);
  }
}
kernels::Activation kernel_kind(int kind) {
  const kernels::Activation kinds[] = {kernels::Activation::RELU, kernels::Activation::SIGMOID,
                                       kernels::Activation::TANH, kernels::Activation::GELU_ERF,
                                       kernels::Activation::GELU_TANH};
  return kinds[kind];
}

// The backward writes into the gradient it is handed when nothing else holds it: the kernel's
// in-place result is its out-of-place one, in the same memory; through autograd a fresh
// gradient, one sent to two activations (add's backward) and a caller's root gradient all
// give the out-of-place values, and the caller's gradient is left as it was.
TEST(FunctionalActivationTest, BackwardReusesOnlyADisposableGradient) {
  for (DType dt : {DType::FLOAT32, DType::FLOAT64}) {
    for (int kind = 0; kind < 5; ++kind) {
      const Tensor x0 = random_input({4, 6}, dt, 40 + kind).detach(),
                   x1 = random_input({4, 6}, dt, 50).detach();
      const Tensor w = random_input({4, 6}, dt, 60).detach();
      const Tensor y0 = apply_activation(kind, x0), y1 = apply_activation(kind, x1);
      const Tensor want0 = kernels::activation_backward(kernel_kind(kind), w, x0, y0);
      const Tensor want1 = kernels::activation_backward(kernel_kind(kind), w, x1, y1);

      Tensor g = w.clone();
      const float* before = static_cast<const float*>(g.raw_data());
      Tensor in_place = kernels::activation_backward(kernel_kind(kind), g, x0, y0, /*in_place=*/true);
      EXPECT_EQ(in_place.raw_data(), static_cast<const void*>(before));
      EXPECT_EQ(in_place.to_vector<double>(), want0.to_vector<double>()) << kind;

      Tensor a = x0.clone().set_stop_gradient(false), b = x1.clone().set_stop_gradient(false);
      sum(mul(apply_activation(kind, a), w)).backward();  // mul's fresh gradient
      EXPECT_EQ(a.grad().to_vector<double>(), want0.to_vector<double>()) << kind;
      a.clear_grad();
      sum(mul(add(apply_activation(kind, a), apply_activation(kind, b)), w))
          .backward();  // one gradient, two nodes
      EXPECT_EQ(a.grad().to_vector<double>(), want0.to_vector<double>()) << kind;
      EXPECT_EQ(b.grad().to_vector<double>(), want1.to_vector<double>()) << kind;
      a.clear_grad();
      const Tensor root = w.clone();
      apply_activation(kind, a).backward(root, false);  // the caller's gradient
      EXPECT_EQ(a.grad().to_vector<double>(), want0.to_vector<double>()) << kind;
      EXPECT_EQ(root.to_vector<double>(), w.to_vector<double>()) << kind;
    }
  }
}

TEST(FunctionalActivationTest, SoftmaxAndLogSoftmax) {
  Tensor x = random_input({2, 3, 4});
  for (int64_t axis : {0, 1, -1}) {
    expect_gradients_match([axis](const Inputs& in) { return F::softmax(in[0], axis); }, {x});
    expect_gradients_match([axis](const Inputs& in) { return F::log_softmax(in[0], axis); }, {x});
  }
  // Stable for large logits; rows sum to one.
  Tensor big = Tensor::from_vector<float>({1000, 1001, 1002}, {1, 3});
  const auto p = F::softmax(big).to_vector<double>();
  EXPECT_NEAR(p[0] + p[1] + p[2], 1.0, 1e-6);
  EXPECT_NEAR(p[2], std::exp(2.0) / (1 + std::exp(1.0) + std::exp(2.0)), 1e-6);
  const auto lp = F::log_softmax(big).to_vector<double>();
  EXPECT_NEAR(lp[2], std::log(p[2]), 1e-5);
}

TEST(FunctionalActivationTest, FlattenAxes) {
  Tensor x = random_input({2, 3, 4, 5});
  EXPECT_EQ(F::flatten(x).shape(), (Shape{2, 60}));
  EXPECT_EQ(F::flatten(x, 0, -1).shape(), (Shape{120}));
  EXPECT_EQ(F::flatten(x, 1, 2).shape(), (Shape{2, 12, 5}));
  expect_gradients_match([](const Inputs& in) { return F::flatten(in[0], 1, 2); }, {x});
  EXPECT_THROW(F::flatten(x, 2, 1), ValueError);
}

TEST(FunctionalActivationTest, DropoutScalesKeptElementsAndIsSeeded) {
  Tensor x = Tensor::ones({1000}, DType::FLOAT64).set_stop_gradient(false);
  Generator g1(42), g2(42);
  Tensor a = F::dropout(x, 0.3, true, &g1);
  Tensor b = F::dropout(x, 0.3, true, &g2);
  EXPECT_EQ(a.to_vector<double>(), b.to_vector<double>());
  int kept = 0;
  for (double v : a.to_vector<double>()) {
    ASSERT_TRUE(v == 0.0 || std::fabs(v - 1.0 / 0.7) < 1e-12) << v;
    kept += v != 0.0;
  }
  EXPECT_GT(kept, 600);
  EXPECT_LT(kept, 800);
  // The gradient is the same mask.
  sum(a).backward();
  EXPECT_EQ(x.grad().to_vector<double>(), a.to_vector<double>());
  // Inference and p = 0 are the identity; p = 1 drops everything.
  EXPECT_TRUE(F::dropout(x, 0.5, false).is_same(x));
  EXPECT_TRUE(F::dropout(x, 0.0, true).is_same(x));
  for (double v : F::dropout(x, 1.0, true).to_vector<double>()) EXPECT_EQ(v, 0.0);
  EXPECT_THROW(F::dropout(x, 1.5), ValueError);
}

}  // namespace
}  // namespace crew
