#include "crew/tensor/device/host_backend.h"

#include <cstdlib>
#include <cstring>

#include "crew/core/check.h"

namespace crew {
namespace {

constexpr size_t kAlignment = 64;

class HostAllocator : public Allocator {
 public:
  void* allocate(size_t bytes, Stream) override {
    size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
    if (rounded == 0) rounded = kAlignment;
    void* p = std::aligned_alloc(kAlignment, rounded);
    CREW_CHECK(p != nullptr, "Storage: cannot allocate ", bytes, " bytes");  // ValueError, as before the seam
    return p;
  }
  void deallocate(void* data, size_t, Stream) noexcept override { std::free(data); }
};

class HostBackend : public DeviceBackend {
 public:
  std::shared_ptr<Allocator> allocator(const Place&) override { return host_allocator(); }
  void zero(const Place&, void* data, size_t bytes) override { std::memset(data, 0, bytes); }
  void copy(void* dst, const Place&, const void* src, const Place&, size_t bytes) override {
    std::memmove(dst, src, bytes);
  }
  int device_count() const override { return 1; }
};

}  // namespace

const std::shared_ptr<DeviceBackend>& host_backend() {
  static auto* backend = new std::shared_ptr<DeviceBackend>(std::make_shared<HostBackend>());
  return *backend;
}

const std::shared_ptr<Allocator>& host_allocator() {
  static auto* allocator = new std::shared_ptr<Allocator>(std::make_shared<HostAllocator>());
  return *allocator;
}

}  // namespace crew
