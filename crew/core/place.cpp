#include "crew/core/place.h"

#include <algorithm>
#include <cctype>

#include "crew/core/check.h"

namespace crew {
namespace {

// The index after "gpu:" / "fake:", or -1 when the rest is not a non-negative integer.
int parse_index(const std::string& rest) {
  if (rest.empty() || rest.size() > 6) return -1;
  for (char c : rest) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return -1;
  }
  return std::stoi(rest);
}

}  // namespace

const char* device_type_name(DeviceType type) {
  switch (type) {
    case DeviceType::CPU: return "cpu";
    case DeviceType::GPU: return "gpu";
    case DeviceType::GPU_PINNED: return "gpu_pinned";
    case DeviceType::FAKE: return "fake";
  }
  return "unknown";
}

std::string Place::to_string() const {
  switch (type) {
    case DeviceType::CPU:
    case DeviceType::GPU_PINNED: return device_type_name(type);
    case DeviceType::GPU:
    case DeviceType::FAKE: return std::string(device_type_name(type)) + ":" + std::to_string(device);
  }
  return "unknown";
}

Place parse_place(const std::string& text, int default_gpu) {
  std::string s = text;
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  if (s == "cpu") return CPUPlace();
  if (s == "gpu") return CUDAPlace(default_gpu);
  if (s == "gpu_pinned") return CUDAPinnedPlace();
  for (DeviceType type : {DeviceType::GPU, DeviceType::FAKE}) {
    const std::string prefix = std::string(device_type_name(type)) + ":";
    if (s.rfind(prefix, 0) == 0) {
      const int index = parse_index(s.substr(prefix.size()));
      if (index >= 0) return {type, index};
    }
  }
  CREW_THROW(ValueError, "The device must be a string which is like 'cpu', 'gpu', 'gpu:x' or 'gpu_pinned', got '",
             text, "'");
}

}  // namespace crew
