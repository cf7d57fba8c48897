// NumpyRandomState against reference values printed by NumPy's legacy RandomState.
#include "crew/io/numpy_random.h"

#include <gtest/gtest.h>

#include <numeric>
#include <random>

namespace crew::io {
namespace {

std::vector<int64_t> permutation(uint32_t seed, int64_t n) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), int64_t{0});
  NumpyRandomState(seed).shuffle(v);
  return v;
}

TEST(NumpyRandom, RawStreamIsMt19937InitGenrand) {
  for (uint32_t seed : {0u, 1u, 5489u, 123456789u, 0xffffffffu}) {
    std::mt19937 ref(seed);
    NumpyRandomState rs(seed);
    for (int k = 0; k < 2000; ++k) ASSERT_EQ(rs.next_uint32(), ref()) << "seed " << seed << " draw " << k;
  }
  // The C++ standard's check value for MT19937: the 10000th output from seed 5489.
  NumpyRandomState rs(5489);
  uint32_t v = 0;
  for (int k = 0; k < 10000; ++k) v = rs.next_uint32();
  EXPECT_EQ(v, 4123659995u);
}

TEST(NumpyRandom, RandomSampleMatchesNumpy) {
  // np.random.RandomState(0).random_sample(3)
  NumpyRandomState rs(0);
  EXPECT_DOUBLE_EQ(rs.random_sample(), 0.5488135039273248);
  EXPECT_DOUBLE_EQ(rs.random_sample(), 0.7151893663724195);
  EXPECT_DOUBLE_EQ(rs.random_sample(), 0.6027633760716439);
}

TEST(NumpyRandom, ShuffleMatchesNumpyPermutation) {
  // np.random.RandomState(s).permutation(10)
  EXPECT_EQ(permutation(0, 10), (std::vector<int64_t>{2, 8, 4, 9, 1, 6, 7, 3, 0, 5}));
  EXPECT_EQ(permutation(42, 10), (std::vector<int64_t>{8, 1, 5, 0, 7, 2, 9, 4, 3, 6}));
}

TEST(NumpyRandom, RandomIntervalStaysInRangeAndCoversIt) {
  NumpyRandomState rs(7);
  std::vector<int> seen(6, 0);
  for (int k = 0; k < 600; ++k) {
    uint64_t v = rs.random_interval(5);
    ASSERT_LE(v, 5u);
    ++seen[v];
  }
  for (int c : seen) EXPECT_GT(c, 0);
  EXPECT_EQ(rs.random_interval(0), 0u);
  EXPECT_LE(rs.random_interval(uint64_t{1} << 40), uint64_t{1} << 40);
}

TEST(NumpyRandom, ShuffleIsAPermutationAndSeedDependent) {
  auto a = permutation(3, 1000), b = permutation(4, 1000);
  EXPECT_NE(a, b);
  std::vector<int64_t> sorted = a;
  std::sort(sorted.begin(), sorted.end());
  for (int64_t k = 0; k < 1000; ++k) ASSERT_EQ(sorted[static_cast<size_t>(k)], k);
  EXPECT_EQ(permutation(3, 1000), a);
}

}  // namespace
}  // namespace crew::io
