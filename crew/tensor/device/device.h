#pragma once
// The device seam: what a device backend provides to Storage and Tensor (memory, zeroing,
// copies), one backend per DeviceType, and the place new tensors and layers go to.
//
// A backend lives in its own folder and registers itself once, as a ggml backend does:
//
//   class MyBackend : public DeviceBackend { ... };
//   register_device_backend(DeviceType::GPU, std::make_shared<MyBackend>());
//
// Kernels dispatch by device type through their own slots (crew/tensor/kernels/dispatch.h).
// The CPU backend is built in (crew/tensor/device/host_backend.cpp).
#include <cstddef>
#include <memory>

#include "crew/core/place.h"

namespace crew {

// A device's queue of work (a CUDA stream); null: the device's default stream. Host memory
// ignores it.
struct Stream {
  void* handle = nullptr;
};

// Memory of one place. A stream-ordered allocator (cudaMallocAsync, a caching pool) frees
// memory for reuse only after the work queued on the streams that used it.
class Allocator {
 public:
  virtual ~Allocator() = default;
  // At least `bytes` bytes (64-byte aligned), usable by work on `stream`; throws DeviceError
  // saying how much was asked when the place has no room.
  virtual void* allocate(size_t bytes, Stream stream) = 0;
  // Returns memory from allocate() with the same bytes; its reuse waits for `stream`.
  virtual void deallocate(void* data, size_t bytes, Stream stream) noexcept = 0;
  // The memory is also used by work on `stream`: not reusable before that work ends.
  virtual void record_stream(void* /*data*/, Stream /*stream*/) {}
};

class DeviceBackend {
 public:
  virtual ~DeviceBackend() = default;
  // The allocator of one place of this backend's type.
  virtual std::shared_ptr<Allocator> allocator(const Place& place) = 0;
  // Sets `bytes` bytes at `data` (on `place`) to zero.
  virtual void zero(const Place& place, void* data, size_t bytes) = 0;
  // Copies `bytes` bytes; at least one of the places is this backend's, the other may be a
  // host place. Returns when `dst` holds the bytes.
  virtual void copy(void* dst, const Place& dst_place, const void* src, const Place& src_place, size_t bytes) = 0;
  // Devices of this type present (0 when none).
  virtual int device_count() const = 0;
  // The most bytes of `place`'s memory that tensors held at once (0: the backend does not count).
  virtual size_t peak_memory(const Place& /*place*/) { return 0; }
};

// Registers (or, with null, removes) the backend of `type`; CPU's is built in and fixed.
void register_device_backend(DeviceType type, std::shared_ptr<DeviceBackend> backend);
// The backend of `place`'s type; DeviceError naming `op` and the place when crew has none.
DeviceBackend& device_backend(const Place& place, const char* op);
// Whether a backend of `type` is registered.
bool has_device_backend(DeviceType type);

// Copies bytes between any two places (host to host is memcpy).
void copy_bytes(void* dst, const Place& dst_place, const void* src, const Place& src_place, size_t bytes,
                const char* op);

// The peak bytes tensors held on `place` (the allocator's count; 0 for host places and for
// backends that do not count): train programs report it beside PyTorch's max_memory_allocated.
size_t device_peak_memory(const Place& place);

// Whether this build of crew has a CUDA backend (paddle.device.is_compiled_with_cuda()).
bool is_compiled_with_cuda();
// GPUs this process can use (paddle.device.cuda.device_count()): 0 without a CUDA backend.
int cuda_device_count();

// Paddle's set_device("cpu" | "gpu" | "gpu:N"): where new tensors and layers go. "gpu" means the
// rank's own GPU (ParallelEnv's device_id). Throws ValueError in Paddle's words for a device
// crew was not built for or that is not present. Returns the place chosen.
Place set_device(const std::string& device);
// The place of set_device, as a string ("cpu", "gpu:0"); "cpu" until set_device is called.
std::string get_device();
// The place of set_device.
Place current_place();

}  // namespace crew
