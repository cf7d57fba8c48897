#include "crew/tensor/storage.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

#include "crew/core/check.h"

namespace crew {

Storage::Storage(size_t bytes, Init init) : bytes_(bytes) {
  size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  if (rounded == 0) rounded = kAlignment;
  data_ = std::aligned_alloc(kAlignment, rounded);
  if (data_ == nullptr) {
    CREW_THROW(ValueError, "Storage: cannot allocate ", bytes, " bytes");
  }
  if (init == Init::ZERO) {
    std::memset(data_, 0, rounded);
  } else {
#ifndef NDEBUG
    std::memset(data_, 0xFF, rounded);
#endif
  }
}

Storage::Storage(void* data, size_t bytes, std::shared_ptr<const void> owner)
    : data_(data), bytes_(bytes), owner_(std::move(owner)) {
  CREW_CHECK(data != nullptr && owner_ != nullptr, "Storage: external memory needs data and an owner");
  CREW_CHECK(reinterpret_cast<uintptr_t>(data) % kAlignment == 0, "Storage: external memory at ", data,
             " is not ", kAlignment, "-byte aligned");
}

Storage::~Storage() {
  if (!owner_) std::free(data_);
}

}  // namespace crew
