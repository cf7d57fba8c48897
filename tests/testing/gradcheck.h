#pragma once
// Finite-difference gradient checks for tests (header-only: the test binaries that use it
// link crew_autograd; crew_testing itself does not).
//
//   crew::testing::expect_gradients_match(
//       [](const std::vector<Tensor>& in) { return crew::mul(in[0], in[1]); },
//       {crew::testing::random_input({3, 4}), crew::testing::random_input({4})});
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <vector>

#include "crew/autograd/autograd.h"
#include "crew/tensor/random.h"
#include "crew/tensor/tensor.h"

namespace crew::testing {

struct GradcheckOptions {
  double eps = 1e-6;   // central-difference step
  double atol = 1e-6;  // |analytic - numeric| <= atol + rtol * |numeric|
  double rtol = 1e-4;
  uint64_t seed = 1234;  // for the random projection of the output
};

// Options suited to float32 kernels (oneDNN): larger step, looser tolerance.
inline GradcheckOptions float32_options() { return GradcheckOptions{1e-2, 2e-3, 2e-2, 1234}; }

// A float64 (by default) tensor with values in [-1, 1], requiring gradients.
inline Tensor random_input(const Shape& shape, DType dtype = DType::FLOAT64, uint64_t seed = 7) {
  Generator gen(seed);
  Tensor t = crew::uniform(shape, -1.0, 1.0, dtype, &gen);
  t.set_stop_gradient(false);
  return t;
}

inline double dot(const Tensor& a, const Tensor& b) {
  const std::vector<double> x = a.to_vector<double>(), y = b.to_vector<double>();
  double s = 0;
  for (size_t i = 0; i < x.size(); ++i) s += x[i] * y[i];
  return s;
}

// Checks d <f(inputs), R> / d inputs (R a fixed random tensor) against central differences,
// for every element of every input with stop_gradient = false.
inline void expect_gradients_match(const std::function<Tensor(const std::vector<Tensor>&)>& f,
                                   std::vector<Tensor> inputs, GradcheckOptions opt = {}) {
  for (Tensor& t : inputs) t.clear_grad();
  Tensor out = f(inputs);
  ASSERT_TRUE(out.requires_grad()) << "the function's output records no graph";
  Generator gen(opt.seed);
  Tensor proj = crew::uniform(out.shape(), -1.0, 1.0, out.dtype(), &gen);
  out.backward(proj, false);
  for (size_t i = 0; i < inputs.size(); ++i) {
    Tensor& in = inputs[i];
    if (!in.requires_grad()) continue;
    Tensor analytic = in.grad();
    ASSERT_TRUE(analytic.defined()) << "input " << i << " got no gradient";
    ASSERT_EQ(analytic.shape(), in.shape()) << "input " << i;
    const std::vector<double> a = analytic.to_vector<double>();
    for (int64_t j = 0; j < in.numel(); ++j) {
      auto eval = [&](double delta) {
        NoGradGuard no_grad;
        Tensor saved = in.clone();
        std::vector<double> v = in.to_vector<double>();
        v[j] += delta;
        Tensor perturbed = Tensor::from_vector(v, in.shape()).to(in.dtype());
        in.copy_(perturbed);
        const double r = dot(f(inputs), proj);
        in.copy_(saved);
        return r;
      };
      const double numeric = (eval(opt.eps) - eval(-opt.eps)) / (2 * opt.eps);
      EXPECT_NEAR(a[j], numeric, opt.atol + opt.rtol * std::fabs(numeric))
          << "input " << i << " element " << j << " of shape " << shape_str(in.shape());
    }
  }
}

}  // namespace crew::testing
