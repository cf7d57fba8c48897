#pragma once
// What the tests/nn/functional_*_test.cpp files share: the functional API as F, the
// finite-difference gradient checks (tests/testing/gradcheck.h) and their input list type.
#include <vector>

#include "crew/autograd/ops.h"
#include "crew/nn/functional.h"
#include "tests/testing/gradcheck.h"

namespace crew::nn::functional_testing {

namespace F = nn::functional;
using crew::testing::expect_gradients_match;
using crew::testing::random_input;
using Inputs = std::vector<Tensor>;

}  // namespace crew::nn::functional_testing
