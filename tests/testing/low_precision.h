#pragma once
// Checks of 16-bit (bfloat16/float16) results against float32 references. Header-only:
// include it only from suites that link crew_tensor.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "crew/tensor/random.h"
#include "crew/tensor/tensor.h"

namespace crew::testing {

// Asserts that got has `dtype` and want's shape, and every element within tol * max|want| of
// want's (want float32); stops at the first that is not.
inline void expect_close_to_float32(const Tensor& got, const Tensor& want, DType dtype, double tol,
                                    const std::string& what) {
  ASSERT_TRUE(got.defined()) << what;
  ASSERT_EQ(got.dtype(), dtype) << what;
  ASSERT_EQ(got.shape(), want.shape()) << what;
  const auto g = got.to_vector<double>(), w = want.to_vector<double>();
  double scale = 1e-6;
  for (double v : w) scale = std::max(scale, std::fabs(v));
  for (size_t i = 0; i < g.size(); ++i) {
    ASSERT_NEAR(g[i], w[i], tol * scale) << what << " " << dtype_name(dtype) << " element " << i;
  }
}

// A leaf of `dtype` (uniform in [-1, 1]) and its float32 twin holding the same values, both
// requiring grad.
inline std::pair<Tensor, Tensor> low_precision_leaves(const Shape& shape, DType dtype, Generator* gen) {
  Tensor low = uniform(shape, -1, 1, DType::FLOAT32, gen).to(dtype);
  Tensor f32 = low.to(DType::FLOAT32);
  low.set_stop_gradient(false);
  f32.set_stop_gradient(false);
  return {low, f32};
}

}  // namespace crew::testing
