#pragma once
// Where a tensor's memory lives, with Paddle's names: CPUPlace(), CUDAPlace(i),
// CUDAPinnedPlace(), printed and parsed as "cpu", "gpu:0", "gpu_pinned".
//
//   Place p = parse_place("gpu:1", 0);     // CUDAPlace(1)
//   p.to_string();                         // "gpu:1"
//   CPUPlace().host_accessible();          // true: host code may read its elements
//
// FAKE is the test device (tests/testing/fake_device.h): host memory behind a place that host
// code may not touch, with kernels of its own, so the device seam is tested without a GPU.
#include <cstdint>
#include <string>

namespace crew {

enum class DeviceType : uint8_t { CPU, GPU, GPU_PINNED, FAKE };
inline constexpr int kNumDeviceTypes = 4;

// "cpu", "gpu", "gpu_pinned", "fake".
const char* device_type_name(DeviceType type);

struct Place {
  DeviceType type = DeviceType::CPU;
  int device = 0;  // the device's index; 0 for CPU and pinned memory

  bool is_cpu_place() const { return type == DeviceType::CPU; }
  bool is_gpu_place() const { return type == DeviceType::GPU; }
  bool is_cuda_pinned_place() const { return type == DeviceType::GPU_PINNED; }
  // Whether host code may read and write the memory (CPU and pinned host memory).
  bool host_accessible() const { return type == DeviceType::CPU || type == DeviceType::GPU_PINNED; }
  // "cpu", "gpu:0", "gpu_pinned", "fake:0" (what get_device() returns).
  std::string to_string() const;
  friend bool operator==(const Place& a, const Place& b) { return a.type == b.type && a.device == b.device; }
  friend bool operator!=(const Place& a, const Place& b) { return !(a == b); }
};

inline Place CPUPlace() { return {DeviceType::CPU, 0}; }
inline Place CUDAPlace(int device) { return {DeviceType::GPU, device}; }
inline Place CUDAPinnedPlace() { return {DeviceType::GPU_PINNED, 0}; }

// Parses Paddle's device strings: "cpu", "gpu" (= gpu:<default_gpu>), "gpu:N", "gpu_pinned",
// "fake:N"; case-insensitive. Throws ValueError in Paddle's words otherwise. Says nothing about
// whether crew was built for the device (set_device checks that).
Place parse_place(const std::string& text, int default_gpu);

}  // namespace crew
