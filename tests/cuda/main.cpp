// The GPU suite's main: exits 77 (ctest's SKIP_RETURN_CODE: "skipped") where no GPU is usable,
// so the `gpu` label passes as skipped on machines without one. New device memory is poisoned
// with NaN (CREW_CUDA_POISON) so that an output a kernel forgets to write never passes.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

#include "crew/tensor/backends/cuda/cuda.h"

int main(int argc, char** argv) {
  setenv("CREW_CUDA_POISON", "1", 0);
  const int gpus = crew::cuda::device_count();
  if (gpus == 0) {
    std::printf("no GPU (no driver or no device): the gpu tests are skipped\n");
    return 77;
  }
  std::printf("%d GPU(s)\n", gpus);
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
