#pragma once
// A 64-byte-aligned byte buffer shared by a tensor and its views, on one place (host memory
// unless said otherwise), from that place's allocator (crew/tensor/device/device.h):
// zero-initialised, or left uninitialised for outputs that a kernel overwrites in full (no
// memset pass over memory that is written anyway). Builds without NDEBUG fill uninitialised
// host buffers with 0xFF bytes (NaN for floats, -1 for integers), so a kernel that reads what
// it never wrote shows in tests.
#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>

#include "crew/core/place.h"
#include "crew/tensor/device/device.h"
#include "crew/tensor/layout.h"

namespace crew {

class Storage {
 public:
  static constexpr size_t kAlignment = 64;
  enum class Init { ZERO, UNINITIALIZED };
  explicit Storage(size_t bytes, Init init = Init::ZERO, const Place& place = CPUPlace());
  // Memory owned elsewhere (a shared-memory mapping, ...), 64-byte aligned, on `place`:
  // `owner` keeps it alive as long as this storage, which never frees `data` itself.
  Storage(void* data, size_t bytes, std::shared_ptr<const void> owner, const Place& place = CPUPlace());
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  // The address on the storage's place: a host pointer only where place().host_accessible().
  void* data() { return data_; }
  const void* data() const { return data_; }
  const Place& place() const { return place_; }
  size_t bytes() const { return bytes_; }
  // False for memory owned elsewhere (the constructor with an owner).
  bool owns_memory() const { return owner_ == nullptr; }

  // The bytes' layout when it is not row-major, else null.
  const OpaqueLayout* layout() const {
    return opaque_.load(std::memory_order_acquire) ? layout_.get() : nullptr;
  }
  // Marks freshly written bytes as being in `layout` (an owned storage of layout->bytes()).
  void set_layout(std::shared_ptr<const OpaqueLayout> layout);
  // How often the bytes were changed in place through crew's API (Tensor::copy_, fill_, zero_,
  // optimizer steps, ...): a tensor saved for backward records it, and backward refuses to run
  // on data changed since (crew/autograd/saved_version.h). Shared by every view of the storage.
  uint64_t version() const { return version_.load(std::memory_order_acquire); }
  void bump_version() { version_.fetch_add(1, std::memory_order_acq_rel); }
  // How many live graph nodes hold this storage for their backward (NumPy gets a read-only
  // view of such memory).
  int saved_for_backward() const { return saved_.load(std::memory_order_acquire); }
  void add_saved(int delta) { saved_.fetch_add(delta, std::memory_order_acq_rel); }

  // Converts the bytes to row-major in place (new memory of layout->plain_bytes()); a no-op
  // when they are row-major already. Thread-safe.
  void make_plain();

 private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
  Place place_;
  std::shared_ptr<Allocator> allocator_;  // null for memory owned elsewhere
  std::shared_ptr<const void> owner_;  // set for memory owned elsewhere
  std::shared_ptr<const OpaqueLayout> layout_;
  std::atomic<bool> opaque_{false};  // layout_ is set: the fast check of raw_data()
  std::mutex convert_mu_;
  std::atomic<uint64_t> version_{0};
  std::atomic<int> saved_{0};
};

}  // namespace crew
