#pragma once
// The fake device's entries (CPU-made, tests/testing/fake_entries.h) of the kernels under
// distributed's DataParallel and Reducer: bucket copies. One line per kernel slot.
#include "crew/tensor/kernels/bucket_copy.h"
#include "tests/testing/fake_entries.h"

namespace crew::testing {

inline void set_fake_dist_kernels(bool on) {
  set_fake_entry<&kernels::pack_flat_kernel>(on);
  set_fake_entry<&kernels::unpack_flat_kernel>(on);
}

}  // namespace crew::testing
