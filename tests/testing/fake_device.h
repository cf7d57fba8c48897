#pragma once
// The fake device: host memory behind places "fake:0" and "fake:1" that host code may not
// touch (Place::host_accessible() is false), with a backend and kernel entries of its own.
// It tests the device seam without a GPU: placement errors, the pointer guard, copies
// between places, and a missing kernel named.
//
//   testing::FakeDevice fake;                     // registers; unregisters when destroyed
//   Tensor x = Tensor::ones({2}, DType::FLOAT32, fake.place());
//   x.data<float>();                              // DeviceError: ... on fake:0 ...
//
// Header-only: the .cpp files of tests/testing link only crew_core.
#include <atomic>
#include <cstdlib>
#include <cstring>

#include "crew/tensor/device/device.h"
#include "crew/tensor/kernels/fill_cast.h"
#include "crew/tensor/tensor.h"

namespace crew::testing {

class FakeDevice {
 public:
  static constexpr int kDevices = 2;

  FakeDevice() {
    register_device_backend(DeviceType::FAKE, std::make_shared<Backend>());
    kernels::fill_kernel.set(DeviceType::FAKE, &fill);
    kernels::cast_kernel.set(DeviceType::FAKE, &cast);
    calls() = 0;
  }
  ~FakeDevice() {
    kernels::fill_kernel.set(DeviceType::FAKE, nullptr);
    kernels::cast_kernel.set(DeviceType::FAKE, nullptr);
    register_device_backend(DeviceType::FAKE, nullptr);
  }
  FakeDevice(const FakeDevice&) = delete;
  FakeDevice& operator=(const FakeDevice&) = delete;

  static Place place(int device = 0) { return {DeviceType::FAKE, device}; }
  // How often the fake kernel entries ran since construction.
  static std::atomic<int>& calls() {
    static std::atomic<int> n{0};
    return n;
  }

 private:
  class Memory : public Allocator {
   public:
    void* allocate(size_t bytes, Stream) override { return std::aligned_alloc(64, (bytes + 63) / 64 * 64); }
    void deallocate(void* data, size_t, Stream) noexcept override { std::free(data); }
  };
  class Backend : public DeviceBackend {
   public:
    std::shared_ptr<Allocator> allocator(const Place&) override { return memory_; }
    void zero(const Place&, void* data, size_t bytes) override { std::memset(data, 0, bytes); }
    void copy(void* dst, const Place&, const void* src, const Place&, size_t bytes) override {
      std::memmove(dst, src, bytes);
    }
    int device_count() const override { return kDevices; }

   private:
    std::shared_ptr<Allocator> memory_ = std::make_shared<Memory>();
  };

  // The fake device's own kernels: loops over device_data(), as a device's kernel would.
  static void fill(const Tensor& t, double value) {
    ++calls();
    dispatch_dtype(t.dtype(), [&](auto tag) {
      using T = decltype(tag);
      T* p = static_cast<T*>(t.device_data());
      for (int64_t i = 0; i < t.numel(); ++i) p[i] = static_cast<T>(value);
    });
  }
  static void cast(const Tensor& src, const Tensor& dst) {
    ++calls();
    dispatch_dtype(dst.dtype(), [&](auto dtag) {
      using D = decltype(dtag);
      D* d = static_cast<D*>(dst.device_data());
      dispatch_dtype(src.dtype(), [&](auto stag) {
        using S = decltype(stag);
        const S* s = static_cast<const S*>(src.device_data());
        for (int64_t i = 0; i < src.numel(); ++i) d[i] = static_cast<D>(s[i]);
      });
    });
  }
};

}  // namespace crew::testing
