#include "crew/tensor/storage.h"

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

Storage::~Storage() { std::free(data_); }

}  // namespace crew
