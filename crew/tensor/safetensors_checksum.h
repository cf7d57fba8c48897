#pragma once
// The integrity checksum crew stores in its safetensors files: CRC-32C (Castagnoli) over a
// canonical description of the file's content, kept in the metadata under kChecksumKey as
// "crc32c:<8 hex digits>". Files from other writers have no such key and load unchecked.
//
// Digest order: every metadata (key, value) except the checksum itself, in key order, as
// key '\0' value '\0'; then every tensor in data order, as name '\0' dtype-code '\0'
// extents joined by ',' '\0' and its data bytes.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "crew/tensor/shape.h"

namespace crew::detail {

inline constexpr const char* kChecksumKey = "crew.checksum";

class Crc32c {
 public:
  void update(const void* data, size_t n);
  void update(std::string_view s) { update(s.data(), s.size()); }
  // update(s) followed by a '\0' separator.
  void field(std::string_view s);
  uint32_t value() const { return ~state_; }

 private:
  uint32_t state_ = 0xFFFFFFFFu;
};

// "crc32c:0123abcd".
std::string format_checksum(uint32_t crc);

// Feeds one tensor's description (name, dtype code, extents); its data bytes follow.
void digest_tensor(Crc32c& crc, const std::string& name, const char* dtype_code, const Shape& shape);

// Feeds the metadata part of the digest (skipping kChecksumKey).
void digest_metadata(Crc32c& crc, const std::map<std::string, std::string>& metadata);

}  // namespace crew::detail
