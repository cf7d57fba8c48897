#pragma once
// A kernel's entries, one per device type: the CPU entry is where the kernel is defined, a
// device backend sets its own from its folder (as ggml backends and c10d's per-device
// backends do), and a missing entry is a DeviceError naming the kernel and the device.
//
//   // conv.h
//   using Conv2dForwardFn = Tensor(const Tensor& x, ...);
//   extern KernelSlot<Conv2dForwardFn> conv2d_forward_kernel;
//   // conv.cpp
//   constinit KernelSlot<Conv2dForwardFn> conv2d_forward_kernel("conv2d_forward", &conv2d_forward_cpu);
//   Tensor conv2d_forward(const Tensor& x, ...) {
//     check_same_place("conv2d", {{"x", &x}, {"weight", &w}});
//     return conv2d_forward_kernel.get(x.place().type)(x, ...);
//   }
//   // a backend's folder, once at start-up
//   kernels::conv2d_forward_kernel.set(DeviceType::GPU, &conv2d_forward_cuda);
#include <array>
#include <initializer_list>
#include <utility>

#include "crew/core/check.h"
#include "crew/core/place.h"

namespace crew {
class Tensor;
}

namespace crew::kernels {

template <typename Fn>
class KernelSlot {
 public:
  using FnType = Fn;
  constexpr KernelSlot(const char* name, Fn* cpu) : name_(name) { entries_[0] = cpu; }
  KernelSlot(const KernelSlot&) = delete;
  KernelSlot& operator=(const KernelSlot&) = delete;

  // Sets (or, with null, removes) the entry of `type`: at start-up, before the kernel runs.
  void set(DeviceType type, Fn* fn) { entries_[static_cast<int>(type)] = fn; }
  // The entry of `type`; DeviceError "<name> has no kernel for <device>" when there is none.
  Fn* get(DeviceType type) const {
    Fn* fn = entries_[static_cast<int>(type)];
    CREW_CHECK_T(DeviceError, fn != nullptr, name_, " has no kernel for ", device_type_name(type));
    return fn;
  }
  bool has(DeviceType type) const { return entries_[static_cast<int>(type)] != nullptr; }
  const char* name() const { return name_; }

 private:
  const char* name_;
  std::array<Fn*, kNumDeviceTypes> entries_{};
};

// Throws DeviceError "conv2d: x on fake:0, weight on cpu" unless every defined operand is on
// the first one's place.
void check_same_place(const char* op, std::initializer_list<std::pair<const char*, const Tensor*>> operands);

}  // namespace crew::kernels
