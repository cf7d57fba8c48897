#include "crew/tensor/device/device.h"

#include <array>
#include <cstring>
#include <mutex>

#include "crew/core/check.h"
#include "crew/core/parallel_env.h"
#include "crew/tensor/device/host_backend.h"

namespace crew {
namespace {

struct Registry {
  std::mutex mu;
  std::array<std::shared_ptr<DeviceBackend>, kNumDeviceTypes> backends;
  Place current = CPUPlace();
};

Registry& registry() {
  static Registry* r = [] {
    auto* reg = new Registry;  // never destroyed: storages may be freed during exit
    reg->backends[static_cast<int>(DeviceType::CPU)] = host_backend();
    return reg;
  }();
  return *r;
}

std::shared_ptr<DeviceBackend> find_backend(DeviceType type) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  return r.backends[static_cast<int>(type)];
}

// Pinned host memory belongs to the CUDA backend; without one it is refused like a GPU.
const char* missing_backend_hint(DeviceType type) {
  switch (type) {
    case DeviceType::GPU:
    case DeviceType::GPU_PINNED: return " (crew is not compiled with CUDA)";
    case DeviceType::FAKE: return " (the fake device is registered by crew's tests only)";
    case DeviceType::CPU: break;
  }
  return "";
}

}  // namespace

void register_device_backend(DeviceType type, std::shared_ptr<DeviceBackend> backend) {
  CREW_CHECK(type != DeviceType::CPU, "register_device_backend: the cpu backend is built in");
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.backends[static_cast<int>(type)] = std::move(backend);
}

bool has_device_backend(DeviceType type) { return find_backend(type) != nullptr; }

DeviceBackend& device_backend(const Place& place, const char* op) {
  if (place.type == DeviceType::CPU) return *host_backend();  // the hot path: no lock
  std::shared_ptr<DeviceBackend> b = find_backend(place.type);
  CREW_CHECK_T(DeviceError, b != nullptr, op, ": no backend for ", place.to_string(),
               missing_backend_hint(place.type));
  return *b;  // registered backends are never destroyed while storages use them (see Storage)
}

void copy_bytes(void* dst, const Place& dst_place, const void* src, const Place& src_place, size_t bytes,
                const char* op) {
  if (bytes == 0) return;
  if (dst_place.host_accessible() && src_place.host_accessible() && dst_place.type != DeviceType::GPU_PINNED &&
      src_place.type != DeviceType::GPU_PINNED) {
    std::memmove(dst, src, bytes);
    return;
  }
  const Place& device = dst_place.type == DeviceType::CPU ? src_place : dst_place;
  device_backend(device, op).copy(dst, dst_place, src, src_place, bytes);
}

bool is_compiled_with_cuda() { return has_device_backend(DeviceType::GPU); }

size_t device_peak_memory(const Place& place) {
  if (place.host_accessible()) return 0;
  std::shared_ptr<DeviceBackend> b = find_backend(place.type);
  return b ? b->peak_memory(place) : 0;
}

int cuda_device_count() {
  std::shared_ptr<DeviceBackend> b = find_backend(DeviceType::GPU);
  return b ? b->device_count() : 0;
}

Place set_device(const std::string& device) {
  const Place place = parse_place(device, ParallelEnv::from_env().device_id);
  if (place.type == DeviceType::GPU || place.type == DeviceType::GPU_PINNED) {
    CREW_CHECK(is_compiled_with_cuda(), "The device should not be '", device,
               "', since crew is not compiled with CUDA");
  }
  CREW_CHECK(place.type != DeviceType::GPU_PINNED, "set_device: '", device,
             "' is not a device to compute on; use 'cpu' or 'gpu:N'");
  std::shared_ptr<DeviceBackend> b = find_backend(place.type);
  CREW_CHECK(b != nullptr, "set_device: no backend for '", device, "'", missing_backend_hint(place.type));
  if (place.type != DeviceType::CPU) {
    const int count = b->device_count();
    CREW_CHECK(place.device < count, "set_device: '", device, "' does not exist: ", count, " ",
               device_type_name(place.type), " device(s) present");
  }
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.current = place;
  return place;
}

Place current_place() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  return r.current;
}

std::string get_device() { return current_place().to_string(); }

}  // namespace crew
