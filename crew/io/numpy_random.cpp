#include "crew/io/numpy_random.h"

#include <cstddef>
#include <utility>

namespace crew::io {

NumpyRandomState::NumpyRandomState(uint32_t seed) {
  // NumPy's mt19937_seed: the reference implementation's init_genrand.
  key_[0] = seed;
  for (int i = 1; i < kStateLen; ++i) {
    uint32_t prev = key_[i - 1];
    key_[i] = 1812433253u * (prev ^ (prev >> 30)) + static_cast<uint32_t>(i);
  }
  pos_ = kStateLen;
}

void NumpyRandomState::reload() {
  constexpr int kM = 397;
  constexpr uint32_t kMatrixA = 0x9908b0dfu;
  constexpr uint32_t kUpper = 0x80000000u;
  constexpr uint32_t kLower = 0x7fffffffu;
  for (int i = 0; i < kStateLen; ++i) {
    uint32_t y = (key_[i] & kUpper) | (key_[(i + 1) % kStateLen] & kLower);
    key_[i] = key_[(i + kM) % kStateLen] ^ (y >> 1) ^ ((y & 1u) ? kMatrixA : 0u);
  }
  pos_ = 0;
}

uint32_t NumpyRandomState::next_uint32() {
  if (pos_ >= kStateLen) reload();
  uint32_t y = key_[pos_++];
  y ^= (y >> 11);
  y ^= (y << 7) & 0x9d2c5680u;
  y ^= (y << 15) & 0xefc60000u;
  y ^= (y >> 18);
  return y;
}

uint64_t NumpyRandomState::next_uint64() {
  uint64_t high = next_uint32();
  uint64_t low = next_uint32();
  return (high << 32) | low;
}

double NumpyRandomState::random_sample() {
  uint32_t a = next_uint32() >> 5;
  uint32_t b = next_uint32() >> 6;
  return (a * 67108864.0 + b) / 9007199254740992.0;
}

uint64_t NumpyRandomState::random_interval(uint64_t max) {
  if (max == 0) return 0;
  uint64_t mask = max;
  mask |= mask >> 1;
  mask |= mask >> 2;
  mask |= mask >> 4;
  mask |= mask >> 8;
  mask |= mask >> 16;
  mask |= mask >> 32;
  uint64_t value;
  if (max <= 0xffffffffull) {
    while ((value = (next_uint32() & mask)) > max) {
    }
  } else {
    while ((value = (next_uint64() & mask)) > max) {
    }
  }
  return value;
}

void NumpyRandomState::shuffle(std::vector<int64_t>& values) {
  for (size_t i = values.size(); i-- > 1;) {
    size_t j = static_cast<size_t>(random_interval(i));
    std::swap(values[i], values[j]);
  }
}

}  // namespace crew::io
