// gelu(approximate=false) on oneDNN (float32) is exact erf GELU, value and gradient.
#include <cmath>

#include "tests/nn/functional_test_util.h"

namespace crew {
namespace {

using namespace nn::functional_testing;

TEST(FunctionalGeluTest, Float32IsErfGeluWithItsDerivative) {
  Tensor x = random_input({64}, DType::FLOAT32, 2);
  x = mul(x, 4.0).detach().set_stop_gradient(false);
  Tensor y = F::gelu(x);
  sum(y).backward();
  const auto xv = x.to_vector<double>(), yv = y.to_vector<double>(), gv = x.grad().to_vector<double>();
  for (size_t i = 0; i < xv.size(); ++i) {
    const double v = xv[i], cdf = 0.5 * (1 + std::erf(v / std::sqrt(2.0)));
    EXPECT_NEAR(yv[i], v * cdf, 1e-5) << v;
    EXPECT_NEAR(gv[i], cdf + v * std::exp(-0.5 * v * v) / std::sqrt(2 * M_PI), 1e-5) << v;
  }
}

}  // namespace
}  // namespace crew
