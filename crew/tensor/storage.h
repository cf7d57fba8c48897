#pragma once
// A 64-byte-aligned byte buffer shared by a tensor and its views: zero-initialised, or left
// uninitialised for outputs that a kernel overwrites in full (no memset pass over memory that
// is written anyway). Builds without NDEBUG fill uninitialised buffers with 0xFF bytes (NaN
// for floats, -1 for integers), so a kernel that reads what it never wrote shows in tests.
#include <cstddef>
#include <memory>

namespace crew {

class Storage {
 public:
  static constexpr size_t kAlignment = 64;
  enum class Init { ZERO, UNINITIALIZED };
  explicit Storage(size_t bytes, Init init = Init::ZERO);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data() { return data_; }
  const void* data() const { return data_; }
  size_t bytes() const { return bytes_; }

 private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace crew
