// crew::kernels::unscale_and_check_finite_ (the GradScaler's kernel): scales in place and
// reports inf/NaN in every floating dtype, wherever in the tensor the bad value lies.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "crew/tensor/kernels/amp.h"

namespace crew {
namespace {

Tensor values(const std::vector<double>& v, DType dtype) {
  return Tensor::from_vector<double>(v, {static_cast<int64_t>(v.size())}).to(dtype);
}

TEST(KernelsAmp, UnscalesFiniteGradientsInEveryFloatingDtype) {
  for (DType dtype : {DType::FLOAT32, DType::FLOAT64, DType::BFLOAT16, DType::FLOAT16}) {
    Tensor g = values({1024.0, -512.0, 0.0, 3.0, 2048.0, 8.0, 16.0, -4.0, 1.0}, dtype);
    EXPECT_FALSE(kernels::unscale_and_check_finite_(g, 1.0 / 1024.0)) << dtype_name(dtype);
    EXPECT_EQ(g.dtype(), dtype);
    const std::vector<double> got = g.to_vector<double>();
    const std::vector<double> want = {1.0,       -0.5,     0.0,        3.0 / 1024.0, 2.0,
                                      1.0 / 128, 1.0 / 64, -1.0 / 256, 1.0 / 1024};
    for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-2 * std::fabs(want[i])) << i;
  }
}

TEST(KernelsAmp, FindsInfAndNanAnywhere) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (DType dtype : {DType::FLOAT32, DType::FLOAT64, DType::BFLOAT16, DType::FLOAT16}) {
    for (double bad : {inf, -inf, nan}) {
      for (size_t at : {0, 7, 40}) {
        std::vector<double> v(41, 0.25);
        v[at] = bad;
        Tensor g = values(v, dtype);
        EXPECT_TRUE(kernels::unscale_and_check_finite_(g, 0.5))
            << dtype_name(dtype) << " " << bad << " at " << at;
      }
    }
  }
}

TEST(KernelsAmp, AnIntegerGradientIsAnError) {
  Tensor g = Tensor::from_vector<int64_t>({1, 2}, {2});
  EXPECT_THROW(kernels::unscale_and_check_finite_(g, 0.5), Error);
}

}  // namespace
}  // namespace crew
