#pragma once
// The fake device's entries (CPU-made, tests/testing/fake_entries.h) of the kernels under io's
// transforms. One line per kernel slot.
#include "crew/tensor/kernels/image.h"
#include "tests/testing/fake_entries.h"

namespace crew::testing {

inline void set_fake_io_kernels(bool on) {
  set_fake_entry<&kernels::hwc_to_chw_kernel>(on);
  set_fake_entry<&kernels::normalize_channels_kernel>(on);
  set_fake_entry<&kernels::crop_kernel>(on);
  set_fake_entry<&kernels::flip_width_kernel>(on);
  set_fake_entry<&kernels::flip_height_kernel>(on);
}

}  // namespace crew::testing
