#pragma once
// The fake device's entries (CPU-made, tests/testing/fake_entries.h) of the kernels under
// nn's layers and functions: convolution, pooling, activations, norms, softmax, losses,
// embedding, dropout, attention. One line per kernel slot.
#include "crew/tensor/kernels/conv.h"
#include "tests/testing/fake_entries.h"

namespace crew::testing {

inline void set_fake_nn_kernels(bool on) {
  set_fake_entry<&kernels::conv2d_forward_kernel>(on);
}

}  // namespace crew::testing
