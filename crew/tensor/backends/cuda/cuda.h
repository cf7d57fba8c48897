#pragma once
// The CUDA backend's public face (no CUDA headers): what tests and tools may ask of it beyond
// the device seam (crew/tensor/device/device.h), which is how everything else uses it.
#include <cstddef>

namespace crew::cuda {

// GPUs present: 0 on any error (no driver, no device). The first call asks the driver.
int device_count();

// Device memory of one GPU as crew's caching allocator sees it.
struct MemoryStats {
  size_t in_use = 0;       // bytes handed out to tensors and not yet returned
  size_t peak_in_use = 0;  // the most in_use has been
  size_t reserved = 0;     // bytes the pool holds from the driver (in use or cached)
};
// Zeros before the device's first allocation.
MemoryStats memory_stats(int device);

}  // namespace crew::cuda
