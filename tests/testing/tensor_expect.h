#pragma once
// Element-wise expectations on tensors. Header-only: include it only from suites that link
// crew_tensor.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "crew/tensor/tensor.h"

namespace crew::testing {

// Expects t (read as doubles) to have want's size and every element within tol of want's.
inline void expect_near(const Tensor& t, const std::vector<double>& want, double tol = 1e-6) {
  std::vector<double> got = t.to_vector<double>();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "element " << i;
}

// |got - want| <= atol + rtol * |want|, element-wise.
struct Tolerance {
  double atol = 1e-6;
  double rtol = 0;
};

// Asserts that got (read as doubles) has want's size and every element within tol of want's;
// stops at the first that is not (a kernel check covers thousands of elements).
inline void expect_close(const std::vector<double>& want, const Tensor& got, const char* what,
                         Tolerance tol) {
  const std::vector<double> g = got.to_vector<double>();
  ASSERT_EQ(g.size(), want.size()) << what;
  for (size_t i = 0; i < g.size(); ++i) {
    ASSERT_NEAR(g[i], want[i], tol.atol + tol.rtol * std::fabs(want[i])) << what << " element " << i;
  }
}

}  // namespace crew::testing
