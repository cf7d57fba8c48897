// The CUDA backend's runtime: the seam sees it, the caching allocator counts and reuses
// memory, out-of-memory and missing-device errors say what they should.
#include <gtest/gtest.h>

#include <string>

#include "crew/tensor/backends/cuda/cuda.h"
#include "crew/tensor/device/device.h"
#include "crew/tensor/tensor.h"

namespace crew {
namespace {

const Place kGpu{DeviceType::GPU, 0};

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(CudaRuntime, TheSeamSeesTheBackend) {
  EXPECT_TRUE(is_compiled_with_cuda());
  EXPECT_EQ(cuda_device_count(), cuda::device_count());
  EXPECT_EQ(set_device("gpu:0"), kGpu);
  EXPECT_EQ(get_device(), "gpu:0");
  set_device("cpu");
}

TEST(CudaRuntime, PeakMemoryThroughTheSeam) {
  { Tensor t = Tensor::zeros({1 << 20}, DType::FLOAT32, kGpu); }
  EXPECT_GE(device_peak_memory(kGpu), 4u << 20);
  EXPECT_EQ(device_peak_memory(kGpu), cuda::memory_stats(0).peak_in_use);
  EXPECT_EQ(device_peak_memory(CPUPlace()), 0u);
}

TEST(CudaRuntime, AllocatorCountsAndReuses) {
  const size_t before = cuda::memory_stats(0).in_use;
  {
    Tensor t = Tensor::zeros({1 << 20}, DType::FLOAT32, kGpu);
    EXPECT_GE(cuda::memory_stats(0).in_use, before + (4u << 20));
  }
  EXPECT_EQ(cuda::memory_stats(0).in_use, before);
  const size_t reserved = cuda::memory_stats(0).reserved;
  Tensor again = Tensor::zeros({1 << 20}, DType::FLOAT32, kGpu);  // from the cache
  EXPECT_EQ(cuda::memory_stats(0).reserved, reserved);
}

TEST(CudaRuntime, OutOfMemorySaysAskedInUseAndFree) {
  const std::string m = message_of([] { Tensor::uninitialized({int64_t{1} << 50}, DType::UINT8, kGpu); });
  EXPECT_NE(m.find("allocate on gpu:0: out of memory: asked 1125899906842624 bytes"), std::string::npos) << m;
  EXPECT_NE(m.find("in use"), std::string::npos) << m;
  EXPECT_NE(m.find("free of"), std::string::npos) << m;
  Tensor still_works = Tensor::ones({8}, DType::FLOAT32, kGpu);
  EXPECT_EQ(still_works.cpu().to_vector<float>(), std::vector<float>(8, 1.0f));
}

TEST(CudaRuntime, AMissingDeviceIsNamed) {
  const int n = cuda::device_count();
  const std::string m = message_of([n] { Tensor::zeros({2}, DType::FLOAT32, Place{DeviceType::GPU, n}); });
  EXPECT_NE(m.find("gpu:" + std::to_string(n) + " does not exist"), std::string::npos) << m;
}

TEST(CudaRuntime, HostCodeCannotReadDeviceMemory) {
  Tensor t = Tensor::ones({2}, DType::FLOAT32, kGpu);
  EXPECT_THROW(t.data<float>(), DeviceError);
  EXPECT_EQ(t.cpu().to_vector<float>(), std::vector<float>(2, 1.0f));
}

}  // namespace
}  // namespace crew
