#include "crew/autograd/saved_version.h"

#include <utility>

namespace crew::autograd {

SavedVersion::SavedVersion(const Tensor& saved)
    : storage_(saved.impl()->storage),
      shape_(saved.shape()),
      dtype_(saved.dtype()),
      version_(storage_->version()) {
  storage_->add_saved(1);
}

SavedVersion::SavedVersion(SavedVersion&& other) noexcept
    : storage_(std::move(other.storage_)),
      shape_(std::move(other.shape_)),
      dtype_(other.dtype_),
      version_(other.version_) {}

SavedVersion::~SavedVersion() {
  if (storage_) storage_->add_saved(-1);
}

void SavedVersion::check(const char* op) const {
  const uint64_t now = storage_->version();
  CREW_CHECK_T(StateError, now == version_, "backward of '", op, "': a tensor it saved (shape ",
               shape_str(shape_), ", ", dtype_name(dtype_),
               ") has been modified by an inplace operation. Its version is ", now,
               " but the expected version is ", version_,
               ". Call the inplace operator before using the tensor in this op, or use an out-of-place "
               "op (e.g. x = x + 1 instead of x.add_(1))");
}

}  // namespace crew::autograd
