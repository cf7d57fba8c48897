#pragma once
// Test values for the reduction collectives of every backend: rank r's element i is a small
// positive integer, so float results are exact, and the expected result is computed directly
// over the ranks in rank order.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "crew/distributed/process_group/process_group.h"
#include "crew/tensor/tensor.h"
#include "tests/testing/child_expect.h"

namespace crew::dist::testing_values {

// Rank r's element i.
template <typename T>
T value_of(int rank, int64_t i) {
  return static_cast<T>((i * 7 + rank * 3) % 5 + 1);
}

template <typename T>
T combine(T a, T b, ReduceOp op) {
  switch (op) {
    case ReduceOp::SUM:
    case ReduceOp::AVG:
      return static_cast<T>(a + b);
    case ReduceOp::PROD:
      return static_cast<T>(a * b);
    case ReduceOp::MAX:
      return a > b ? a : b;
    case ReduceOp::MIN:
      return a < b ? a : b;
  }
  return a;
}

// The reduction over `world` ranks of value_of(r, offset + i), i < n.
template <typename T>
std::vector<T> expected_reduction(int world, int64_t n, ReduceOp op, int64_t offset = 0) {
  std::vector<T> out(n);
  for (int64_t i = 0; i < n; ++i) {
    T acc = value_of<T>(0, offset + i);
    for (int r = 1; r < world; ++r) acc = combine(acc, value_of<T>(r, offset + i), op);
    if (op == ReduceOp::AVG) acc = static_cast<T>(acc / static_cast<T>(world));
    out[i] = acc;
  }
  return out;
}

// Rank `rank`'s input: value_of(rank, offset + i), i < n.
template <typename T>
Tensor rank_tensor(int rank, int64_t n, int64_t offset = 0) {
  std::vector<T> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = value_of<T>(rank, offset + i);
  return Tensor::from_vector<T>(v);
}

// In a rank: throws (CHILD_EXPECT) naming `what`, the element and both values on the first
// difference.
template <typename T>
void require_equal(const Tensor& t, const std::vector<T>& expected, const std::string& what) {
  std::vector<T> got = t.to_vector<T>();
  CHILD_EXPECT(got.size() == expected.size(), what, ": size ", got.size(), " vs ", expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    CHILD_EXPECT(got[i] == expected[i], what, ": element ", i, " is ", +got[i], ", expected ", +expected[i]);
  }
}

// The 16-bit dtypes (bfloat16, float16), which have no C++ arithmetic: rank `rank`'s input
// value_of(rank, offset + i) in `dtype` (exact: small integers).
inline Tensor rank_tensor_half(int rank, int64_t n, DType dtype) {
  return rank_tensor<float>(rank, n).to(dtype);
}

// In a rank: t (a 16-bit reduction over `world` ranks) equals the exact reduction within two
// roundings of its format (the combine's and AVG's division), relative.
inline void require_close_half(const Tensor& t, int world, ReduceOp op, const std::string& what) {
  const std::vector<float> got = t.to(DType::FLOAT32).to_vector<float>();
  const std::vector<double> exact = expected_reduction<double>(world, t.numel(), op);
  const double tolerance = t.dtype() == DType::BFLOAT16 ? 0x1p-7 : 0x1p-10;
  for (size_t i = 0; i < got.size(); ++i) {
    CHILD_EXPECT(std::abs(got[i] - exact[i]) <= tolerance * std::abs(exact[i]), what, ": element ", i, " is ",
                 got[i], ", expected ", exact[i]);
  }
}

}  // namespace crew::dist::testing_values
