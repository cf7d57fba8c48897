// The CUDA backend: the device seam's DeviceBackend for gpu:N and gpu_pinned places, its
// allocators, copies and errors, and the registration of every kernel entry of this folder.
#include "crew/tensor/backends/cuda/runtime.h"

#include <array>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <sstream>
#include <unordered_map>
#include <vector>

#include "crew/core/check.h"
#include "crew/tensor/device/device.h"

namespace crew::cuda {

void throw_cuda_error(cudaError_t err, const char* op, int device) {
  (void)cudaGetLastError();  // clear a sticky-free error so the next call is not blamed for it
  CREW_THROW(DeviceError, op, " on gpu:", device, ": ", cudaGetErrorName(err), ": ", cudaGetErrorString(err));
}

int device_count() {
  static const int count = [] {
    int n = 0;
    // Any error means no usable GPU: without a driver this is cudaErrorInsufficientDriver.
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
      (void)cudaGetLastError();
      return 0;
    }
    return n;
  }();
  return count;
}

DeviceGuard::DeviceGuard(int device, const char* op) : device_(device) {
  const int count = device_count();
  CREW_CHECK_T(DeviceError, device >= 0 && device < count, op, ": gpu:", device, " does not exist (", count,
               " GPU(s) present)");
  CREW_CUDA_CHECK(cudaGetDevice(&previous_), op, device);
  if (previous_ != device) CREW_CUDA_CHECK(cudaSetDevice(device), op, device);
}

DeviceGuard::~DeviceGuard() {
  if (previous_ >= 0 && previous_ != device_) (void)cudaSetDevice(previous_);
}

namespace {

constexpr int kMaxDevices = 64;

struct Streams {
  std::mutex mu;
  std::array<cudaStream_t, kMaxDevices> compute{};
  std::array<bool, kMaxDevices> made{};
};

Streams& streams() {
  static auto* s = new Streams;  // never destroyed: storages may be freed during exit
  return *s;
}

}  // namespace

cudaStream_t compute_stream(int device) {
  CREW_CHECK_T(DeviceError, device >= 0 && device < kMaxDevices, "compute_stream: gpu:", device, " out of range");
  Streams& s = streams();
  std::lock_guard<std::mutex> lock(s.mu);
  if (!s.made[device]) {
    DeviceGuard guard(device, "cudaStreamCreate");
    CREW_CUDA_CHECK(cudaStreamCreateWithFlags(&s.compute[device], cudaStreamNonBlocking), "cudaStreamCreate", device);
    s.made[device] = true;
  }
  return s.compute[device];
}

void synchronize(int device, const char* op) {
  CREW_CUDA_CHECK(cudaStreamSynchronize(compute_stream(device)), op, device);
}

void check_launch(const char* op, int device) {
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) throw_cuda_error(err, op, device);
}

namespace {

// Device memory of one GPU: cudaMallocAsync on the device's default pool with an unlimited
// release threshold (a stream-ordered caching allocator: freed blocks are reused by later
// work on the stream without going back to the driver). Where pools are not supported (some
// sandboxes), a plain cache of cudaMalloc blocks by size whose reuse waits on an event.
class DeviceAllocator : public Allocator {
 public:
  explicit DeviceAllocator(int device) : device_(device) {}

  void* allocate(size_t bytes, Stream stream) override {
    const size_t rounded = bytes == 0 ? 256 : (bytes + 255) / 256 * 256;
    DeviceGuard guard(device_, "allocate");
    init_once();
    cudaStream_t s = stream_of(stream);
    void* p = nullptr;
    cudaError_t err = try_allocate(&p, rounded, s);
    if (err == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      release_cached();  // give cached blocks back to the driver and try once more
      err = try_allocate(&p, rounded, s);
    }
    if (err == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      size_t free_bytes = 0, total = 0;
      (void)cudaMemGetInfo(&free_bytes, &total);
      const MemoryStats st = stats();
      CREW_THROW(DeviceError, "allocate on gpu:", device_, ": out of memory: asked ", bytes, " bytes, ", st.in_use,
                 " bytes in use by crew's tensors, ", st.reserved, " reserved by crew, ", free_bytes, " free of ",
                 total, " on the device");
    }
    if (err != cudaSuccess) throw_cuda_error(err, "allocate", device_);
    if (poison_) (void)cudaMemsetAsync(p, 0xFF, rounded, s);  // NaN in every float: tests see unwritten output
    std::lock_guard<std::mutex> lock(mu_);
    live_[p] = Block{rounded, s, {}};
    in_use_ += rounded;
    if (in_use_ > peak_) peak_ = in_use_;
    return p;
  }

  void deallocate(void* data, size_t, Stream) noexcept override {
    if (data == nullptr) return;
    Block block;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = live_.find(data);
      if (it == live_.end()) return;
      block = std::move(it->second);
      live_.erase(it);
      in_use_ -= block.bytes;
    }
    int previous = -1;
    (void)cudaGetDevice(&previous);
    if (previous != device_) (void)cudaSetDevice(device_);
    // Reuse waits for the streams that used the block besides the one it was allocated on.
    for (cudaStream_t other : block.used_on) {
      cudaEvent_t ev;
      if (cudaEventCreateWithFlags(&ev, cudaEventDisableTiming) == cudaSuccess) {
        (void)cudaEventRecord(ev, other);
        (void)cudaStreamWaitEvent(block.stream, ev, 0);
        (void)cudaEventDestroy(ev);
      }
    }
    if (pools_) {
      (void)cudaFreeAsync(data, block.stream);
    } else {
      cudaEvent_t ev = nullptr;
      if (cudaEventCreateWithFlags(&ev, cudaEventDisableTiming) == cudaSuccess) (void)cudaEventRecord(ev, block.stream);
      std::lock_guard<std::mutex> lock(mu_);
      cache_[block.bytes].push_back(Cached{data, ev});
      cached_bytes_ += block.bytes;
    }
    (void)cudaGetLastError();
    if (previous >= 0 && previous != device_) (void)cudaSetDevice(previous);
  }

  void record_stream(void* data, Stream stream) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = live_.find(data);
    if (it == live_.end() || stream.handle == nullptr) return;
    auto s = static_cast<cudaStream_t>(stream.handle);
    if (s == it->second.stream) return;
    for (cudaStream_t o : it->second.used_on)
      if (o == s) return;
    it->second.used_on.push_back(s);
  }

  MemoryStats stats() {
    MemoryStats st;
    std::lock_guard<std::mutex> lock(mu_);
    st.in_use = in_use_;
    st.peak_in_use = peak_;
    if (pools_) {
      cudaMemPool_t pool;
      uint64_t reserved = 0;
      if (cudaDeviceGetDefaultMemPool(&pool, device_) == cudaSuccess &&
          cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved) == cudaSuccess)
        st.reserved = reserved;
      (void)cudaGetLastError();
    } else {
      st.reserved = in_use_ + cached_bytes_;
    }
    return st;
  }

 private:
  struct Block {
    size_t bytes = 0;
    cudaStream_t stream = nullptr;
    std::vector<cudaStream_t> used_on;
  };
  struct Cached {
    void* data;
    cudaEvent_t ready;
  };

  cudaStream_t stream_of(Stream stream) {
    return stream.handle ? static_cast<cudaStream_t>(stream.handle) : compute_stream(device_);
  }

  void init_once() {
    std::call_once(init_, [this] {
      int supported = 0;
      if (cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, device_) != cudaSuccess) supported = 0;
      (void)cudaGetLastError();
      if (supported != 0 && std::getenv("CREW_CUDA_NO_POOL") == nullptr) {
        cudaMemPool_t pool;
        if (cudaDeviceGetDefaultMemPool(&pool, device_) == cudaSuccess) {
          uint64_t threshold = UINT64_MAX;  // keep freed memory cached in the pool
          if (cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold) == cudaSuccess) pools_ = true;
        }
        (void)cudaGetLastError();
      }
    });
  }

  cudaError_t try_allocate(void** p, size_t bytes, cudaStream_t s) {
    if (pools_) return cudaMallocAsync(p, bytes, s);
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = cache_.find(bytes);
      if (it != cache_.end()) {
        for (size_t i = 0; i < it->second.size(); ++i) {
          Cached c = it->second[i];
          if (c.ready == nullptr || cudaEventQuery(c.ready) == cudaSuccess) {
            if (c.ready) (void)cudaEventDestroy(c.ready);
            it->second.erase(it->second.begin() + static_cast<std::ptrdiff_t>(i));
            cached_bytes_ -= bytes;
            *p = c.data;
            return cudaSuccess;
          }
        }
        (void)cudaGetLastError();
      }
    }
    return cudaMalloc(p, bytes);
  }

  void release_cached() {
    (void)cudaDeviceSynchronize();
    if (pools_) {
      cudaMemPool_t pool;
      if (cudaDeviceGetDefaultMemPool(&pool, device_) == cudaSuccess) (void)cudaMemPoolTrimTo(pool, 0);
    } else {
      std::lock_guard<std::mutex> lock(mu_);
      for (auto& [bytes, blocks] : cache_) {
        for (Cached& c : blocks) {
          if (c.ready) (void)cudaEventDestroy(c.ready);
          (void)cudaFree(c.data);
        }
      }
      cache_.clear();
      cached_bytes_ = 0;
    }
    (void)cudaGetLastError();
  }

  const int device_;
  const bool poison_ = std::getenv("CREW_CUDA_POISON") != nullptr;
  std::once_flag init_;
  bool pools_ = false;
  std::mutex mu_;
  std::unordered_map<void*, Block> live_;
  std::unordered_map<size_t, std::vector<Cached>> cache_;
  size_t in_use_ = 0, peak_ = 0, cached_bytes_ = 0;
};

// Page-locked host memory (cudaHostAlloc): host code may read it, copies from and to a GPU
// run at full speed and may be asynchronous.
class PinnedAllocator : public Allocator {
 public:
  void* allocate(size_t bytes, Stream) override {
    void* p = nullptr;
    const cudaError_t err = cudaHostAlloc(&p, bytes == 0 ? 64 : bytes, cudaHostAllocPortable);
    if (err != cudaSuccess) {
      (void)cudaGetLastError();
      CREW_THROW(DeviceError, "allocate on gpu_pinned: cannot pin ", bytes, " bytes of host memory: ",
                 cudaGetErrorName(err), ": ", cudaGetErrorString(err));
    }
    return p;
  }
  void deallocate(void* data, size_t, Stream) noexcept override {
    if (data != nullptr) (void)cudaFreeHost(data);
    (void)cudaGetLastError();
  }
};

class CudaBackend : public DeviceBackend {
 public:
  size_t peak_memory(const Place& place) override {
    std::shared_ptr<DeviceAllocator> a = device_allocator(place.device);
    return a ? a->stats().peak_in_use : 0;
  }
  std::shared_ptr<Allocator> allocator(const Place& place) override {
    if (place.type == DeviceType::GPU_PINNED) return pinned_;
    DeviceGuard guard(place.device, "allocator");  // checks the device exists
    std::lock_guard<std::mutex> lock(mu_);
    auto& a = device_[static_cast<size_t>(place.device)];
    if (!a) a = std::make_shared<DeviceAllocator>(place.device);
    return a;
  }

  void zero(const Place& place, void* data, size_t bytes) override {
    if (place.type == DeviceType::GPU_PINNED) {
      std::memset(data, 0, bytes);
      return;
    }
    DeviceGuard guard(place.device, "zero");
    CREW_CUDA_CHECK(cudaMemsetAsync(data, 0, bytes, compute_stream(place.device)), "zero", place.device);
  }

  void copy(void* dst, const Place& dst_place, const void* src, const Place& src_place, size_t bytes) override {
    const bool dst_gpu = dst_place.type == DeviceType::GPU, src_gpu = src_place.type == DeviceType::GPU;
    if (!dst_gpu && !src_gpu) {  // pinned <-> host or pinned
      std::memmove(dst, src, bytes);
      return;
    }
    if (dst_gpu && src_gpu && dst_place.device != src_place.device) {
      synchronize(src_place.device, "copy");
      synchronize(dst_place.device, "copy");
      DeviceGuard guard(dst_place.device, "copy");
      CREW_CUDA_CHECK(cudaMemcpyPeer(dst, dst_place.device, src, src_place.device, bytes), "copy", dst_place.device);
      return;
    }
    const int device = dst_gpu ? dst_place.device : src_place.device;
    DeviceGuard guard(device, "copy");
    cudaStream_t s = compute_stream(device);
    const cudaMemcpyKind kind = dst_gpu && src_gpu ? cudaMemcpyDeviceToDevice
                                : dst_gpu          ? cudaMemcpyHostToDevice
                                                   : cudaMemcpyDeviceToHost;
    CREW_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, kind, s), "copy", device);
    // Device to device stays stream-ordered (only the backend's kernels read it); a copy that
    // involves host memory returns when it is done, as the seam promises.
    if (kind != cudaMemcpyDeviceToDevice) CREW_CUDA_CHECK(cudaStreamSynchronize(s), "copy", device);
  }

  int device_count() const override { return cuda::device_count(); }

  std::shared_ptr<DeviceAllocator> device_allocator(int device) {
    std::lock_guard<std::mutex> lock(mu_);
    if (device < 0 || device >= kMaxDevices) return nullptr;
    return device_[static_cast<size_t>(device)];
  }

 private:
  std::mutex mu_;
  std::array<std::shared_ptr<DeviceAllocator>, kMaxDevices> device_{};
  std::shared_ptr<Allocator> pinned_ = std::make_shared<PinnedAllocator>();
};

std::shared_ptr<CudaBackend>& backend() {
  static auto* b = new std::shared_ptr<CudaBackend>(std::make_shared<CudaBackend>());
  return *b;
}

// Registration at start-up makes no CUDA call: a process without a driver starts and runs
// on the CPU; device_count() asks the driver the first time something wants a GPU.
[[maybe_unused]] const bool registered = [] {
  register_device_backend(DeviceType::GPU, backend());
  register_device_backend(DeviceType::GPU_PINNED, backend());
  register_elementwise_kernels();
  register_nn_kernels();
  register_blas_kernels();
  register_conv_kernels();
  register_nn_extra_kernels();
  return true;
}();

}  // namespace

MemoryStats memory_stats(int device) {
  std::shared_ptr<DeviceAllocator> a = backend()->device_allocator(device);
  return a ? a->stats() : MemoryStats{};
}

}  // namespace crew::cuda

// Referenced by the linker (-u, cmake/CrewCuda.cmake) so that the static library's registration
// above is kept in every program that links crew_cuda.
extern "C" {
int crew_cuda_backend_anchor = 0;
}
