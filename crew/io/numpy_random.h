#pragma once
// A bit-exact re-implementation of the parts of NumPy's legacy np.random.RandomState that
// Paddle's DistributedBatchSampler uses: RandomState(seed).shuffle(list).
//
//   crew::io::NumpyRandomState rs(epoch);
//   rs.shuffle(indices);   // the same permutation as np.random.RandomState(epoch).shuffle
#include <array>
#include <cstdint>
#include <vector>

namespace crew::io {

// MT19937 seeded as NumPy seeds it for an integer seed (Knuth's init_genrand, the same as
// std::mt19937(seed)), with NumPy's bounded-integer and shuffle algorithms on top.
class NumpyRandomState {
 public:
  explicit NumpyRandomState(uint32_t seed);

  // The next raw 32-bit output of the generator.
  uint32_t next_uint32();
  // NumPy's next_uint64: high word first.
  uint64_t next_uint64();
  // NumPy's random_sample(): a double in [0, 1) from 53 random bits.
  double random_sample();
  // NumPy's legacy random_interval(max): uniform in [0, max] by mask rejection.
  uint64_t random_interval(uint64_t max);
  // Fisher-Yates as RandomState.shuffle: for i = n-1 .. 1, j = random_interval(i), swap.
  void shuffle(std::vector<int64_t>& values);

 private:
  void reload();
  static constexpr int kStateLen = 624;
  std::array<uint32_t, kStateLen> key_{};
  int pos_ = kStateLen;
};

}  // namespace crew::io
