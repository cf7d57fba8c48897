#pragma once
// The CUDA backend's runtime (crew_cuda, this folder only: nothing else in crew includes CUDA
// headers). One compute stream per (device, thread), errors that name the op, the device and
// the CUDA error, and the launch helpers of the backend's kernels.
//
//   cuda::DeviceGuard guard(x.place().device, "relu");     // cudaSetDevice, restored after
//   cudaStream_t s = cuda::compute_stream(x.place().device);
//   CREW_CUDA_CHECK(cudaMemsetAsync(p, 0, n, s), "zero", device);
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "crew/core/error.h"
#include "crew/core/place.h"
#include "crew/tensor/backends/cuda/cuda.h"

namespace crew::cuda {

// Throws DeviceError "<op> on gpu:<device>: <cudaGetErrorName>: <cudaGetErrorString>".
[[noreturn]] void throw_cuda_error(cudaError_t err, const char* op, int device);

#define CREW_CUDA_CHECK(expr, op, device)                                       \
  do {                                                                          \
    const cudaError_t crew_cuda_err_ = (expr);                                  \
    if (crew_cuda_err_ != cudaSuccess) ::crew::cuda::throw_cuda_error(crew_cuda_err_, op, device); \
  } while (0)

// Makes `device` current for the scope (and checks that it exists), restoring the previous one.
class DeviceGuard {
 public:
  DeviceGuard(int device, const char* op);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1;
  int device_;
};

// The calling thread's compute stream on `device` (created non-blocking on first use): every
// kernel, copy and allocation of the backend is ordered on it.
cudaStream_t compute_stream(int device);
// Waits for the calling thread's work on `device`.
void synchronize(int device, const char* op);

// Launch geometry for n elements: 256 threads a block, at most 65535 * 8 blocks (kernels stride).
inline unsigned blocks_for(int64_t n) {
  const int64_t b = (n + 255) / 256;
  return static_cast<unsigned>(b < 1 ? 1 : (b > 524280 ? 524280 : b));
}
constexpr unsigned kThreads = 256;

// After a launch: DeviceError naming the kernel when the launch failed.
void check_launch(const char* op, int device);

// Registers the kernel entries of every file of the backend (called once by the backend).
void register_elementwise_kernels();
void register_nn_kernels();
void register_blas_kernels();
void register_conv_kernels();
void register_nn_extra_kernels();  // nn_ops.cpp: ResNet-18's and the GPT's

}  // namespace crew::cuda
