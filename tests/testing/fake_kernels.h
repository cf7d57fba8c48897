#pragma once
// Every kernel slot's fake-device entry made from its CPU entry (tests/testing/fake_entries.h),
// for tests that run whole models on the fake device:
//
//   testing::FakeDevice fake;     // the device: memory, copies, its own fill/cast kernels
//   testing::FakeKernels kernels; // entries for all other kernels; removed when destroyed
#include "tests/testing/fake_kernels_core.h"
#include "tests/testing/fake_kernels_dist.h"
#include "tests/testing/fake_kernels_io.h"
#include "tests/testing/fake_kernels_nn.h"

namespace crew::testing {

class FakeKernels {
 public:
  FakeKernels() { set(true); }
  ~FakeKernels() { set(false); }
  FakeKernels(const FakeKernels&) = delete;
  FakeKernels& operator=(const FakeKernels&) = delete;

 private:
  static void set(bool on) {
    set_fake_nn_kernels(on);
    set_fake_core_kernels(on);
    set_fake_dist_kernels(on);
    set_fake_io_kernels(on);
  }
};

}  // namespace crew::testing
