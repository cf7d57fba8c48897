#pragma once
// dropout's random stream: element i of a mask drawn with seed s keeps its value when
// SplitMix64's output number i + 1 from state s is >= p * 2^64. SplitMix64 is counter-based
// (output n is a mix of s + n * golden), so any thread or device computes element i alone, and
// the values are those of the sequential generator crew has always used (bit-exact resume
// and the seeded tests keep their results).
#include <cstdint>

#include "crew/tensor/kernels/host_device.h"

namespace crew::kernels::math {

struct DropoutStream {
  uint64_t seed = 0;

  // SplitMix64's output for state `seed + (i + 1) * golden`.
  CREW_HD uint64_t draw(uint64_t i) const {
    uint64_t z = seed + (i + 1) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // The draw threshold for drop probability p in [0, 1): keep when draw >= threshold.
  CREW_HD static uint64_t threshold(double p) { return static_cast<uint64_t>(p * 18446744073709551616.0); }
  // Whether element i is kept at drop probability p (never at p = 1).
  CREW_HD bool keep(uint64_t i, double p, uint64_t threshold_value) const {
    return p < 1.0 && draw(i) >= threshold_value;
  }
};

}  // namespace crew::kernels::math
