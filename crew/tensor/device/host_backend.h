#pragma once
// The CPU backend: 64-byte-aligned host memory, memset and memcpy.
#include <memory>

#include "crew/tensor/device/device.h"

namespace crew {

const std::shared_ptr<DeviceBackend>& host_backend();
// The allocator of CPU memory (what Storage uses without a place).
const std::shared_ptr<Allocator>& host_allocator();

}  // namespace crew
