#pragma once
// Launch geometry shared by the backend's .cu files: 256-thread blocks, a grid-stride loop.
#include <cstdint>

namespace crew::cuda::launch {

#define CREW_GRID_LOOP(i, n)                                                \
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < (n); \
       i += int64_t(blockDim.x) * gridDim.x)

constexpr unsigned kT = 256;
// Blocks for n elements: at most 65535 * 8 (the kernels stride over the rest).
inline unsigned grid(int64_t n) {
  const int64_t b = (n + kT - 1) / kT;
  return static_cast<unsigned>(b < 1 ? 1 : (b > 524280 ? 524280 : b));
}

}  // namespace crew::cuda::launch
