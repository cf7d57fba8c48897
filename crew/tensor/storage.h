#pragma once
// A 64-byte-aligned, zero-initialised byte buffer shared by a tensor and its views.
#include <cstddef>
#include <memory>

namespace crew {

class Storage {
 public:
  static constexpr size_t kAlignment = 64;
  explicit Storage(size_t bytes);
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
