#include "crew/tensor/storage.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

#include "crew/core/check.h"
#include "crew/tensor/device/host_backend.h"

namespace crew {
namespace {

// What Storage asks its allocator for (and returns to it): bytes rounded up to the alignment,
// never zero.
size_t padded(size_t bytes) {
  return std::max<size_t>(Storage::kAlignment, (bytes + Storage::kAlignment - 1) / Storage::kAlignment * Storage::kAlignment);
}

}  // namespace

Storage::Storage(size_t bytes, Init init, const Place& place) : bytes_(bytes), place_(place) {
  const size_t rounded = padded(bytes);
  DeviceBackend& backend = device_backend(place, "Storage");
  allocator_ = place.type == DeviceType::CPU ? host_allocator() : backend.allocator(place);
  data_ = allocator_->allocate(rounded, Stream{});
  if (init == Init::ZERO) {
    backend.zero(place, data_, rounded);
  } else {
#ifndef NDEBUG
    if (place.host_accessible()) std::memset(data_, 0xFF, rounded);
#endif
  }
}

Storage::Storage(void* data, size_t bytes, std::shared_ptr<const void> owner, const Place& place)
    : data_(data), bytes_(bytes), place_(place), owner_(std::move(owner)) {
  CREW_CHECK(data != nullptr && owner_ != nullptr, "Storage: external memory needs data and an owner");
  CREW_CHECK(reinterpret_cast<uintptr_t>(data) % kAlignment == 0, "Storage: external memory at ", data,
             " is not ", kAlignment, "-byte aligned");
}

void Storage::set_layout(std::shared_ptr<const OpaqueLayout> layout) {
  CREW_CHECK(place_.type == DeviceType::CPU, "Storage: opaque layouts are host layouts, storage is on ",
             place_.to_string());
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
  void* converted = allocator_->allocate(padded(plain), Stream{});
  layout_->to_plain(data_, converted);
  allocator_->deallocate(data_, padded(bytes_), Stream{});
  data_ = converted;
  bytes_ = plain;
  opaque_.store(false, std::memory_order_release);
  layout_.reset();
}

Storage::~Storage() {
  if (allocator_) {
    allocator_->deallocate(data_, padded(bytes_), Stream{});
  }
}

}  // namespace crew
