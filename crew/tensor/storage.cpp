#include "crew/tensor/storage.h"

#include <algorithm>
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

void Storage::set_layout(std::shared_ptr<const OpaqueLayout> layout) {
  CREW_CHECK(layout != nullptr && owner_ == nullptr && layout->bytes() <= bytes_, "Storage: a layout of ",
             layout ? layout->bytes() : 0, " bytes needs an owned storage at least that large, got ", bytes_);
  std::lock_guard<std::mutex> lock(convert_mu_);
  layout_ = std::move(layout);
  opaque_.store(true, std::memory_order_release);
}

void Storage::make_plain() {
  std::lock_guard<std::mutex> lock(convert_mu_);
  if (!opaque_.load(std::memory_order_acquire)) return;
  const size_t plain = layout_->plain_bytes();
  void* converted = std::aligned_alloc(
      kAlignment, std::max<size_t>(kAlignment, (plain + kAlignment - 1) / kAlignment * kAlignment));
  if (converted == nullptr) CREW_THROW(ValueError, "Storage: cannot allocate ", plain, " bytes");
  layout_->to_plain(data_, converted);
  std::free(data_);
  data_ = converted;
  bytes_ = plain;
  opaque_.store(false, std::memory_order_release);
  layout_.reset();
}

Storage::~Storage() {
  if (!owner_) std::free(data_);
}

}  // namespace crew
