#pragma once
// What the backend's .cpp files share to turn tensors into launches: the float32/float64
// dispatch, the device and compute stream of a kernel (On), device pointers.
//
//   On on(x, "layer_norm");                    // x's device current, its compute stream
//   floating(on.op, x.dtype(), [&](auto tag) { using T = decltype(tag); launch::f<T>(ptr<T>(x), ...,
//   on.stream); }); on.check();                                // DeviceError naming the op if the launch
//   failed
#include "crew/core/check.h"
#include "crew/tensor/backends/cuda/runtime.h"
#include "crew/tensor/tensor.h"

namespace crew::cuda {

// Runs f(T{}) for float32 / float64; DeviceError naming the op otherwise.
template <typename F>
void floating(const char* op, DType t, F f) {
  if (t == DType::FLOAT32) {
    f(float{});
  } else if (t == DType::FLOAT64) {
    f(double{});
  } else {
    CREW_THROW(DeviceError, op, " has no gpu kernel for ", dtype_name(t));
  }
}

// The device and its compute stream for a kernel on `t`'s place (current for the scope).
struct On {
  On(const Tensor& t, const char* op_)
      : op(op_), device(t.place().device), guard(device, op_), stream(compute_stream(device)) {}
  void check() const { check_launch(op, device); }
  const char* op;
  int device;
  DeviceGuard guard;
  cudaStream_t stream;
};

// The tensor's device address as T*, null for an undefined tensor.
template <typename T>
T* ptr(const Tensor& t) {
  return t.defined() ? static_cast<T*>(t.device_data()) : nullptr;
}

}  // namespace crew::cuda
