#include "crew/tensor/safetensors_checksum.h"

#include <array>
#include <cstring>

#if defined(__SSE4_2__)
#include <nmmintrin.h>
#endif

namespace crew::detail {
namespace {

// Reflected CRC-32C table (polynomial 0x82F63B78) for the portable path and the tail bytes.
std::array<uint32_t, 256> make_table() {
  std::array<uint32_t, 256> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    t[i] = c;
  }
  return t;
}

const std::array<uint32_t, 256>& table() {
  static const std::array<uint32_t, 256> t = make_table();
  return t;
}

}  // namespace

void Crc32c::update(const void* data, size_t n) {
  const auto* p = static_cast<const unsigned char*>(data);
  uint32_t c = state_;
#if defined(__SSE4_2__)
  // The SSE4.2 crc32 instruction computes exactly CRC-32C, 8 bytes at a time.
  uint64_t c64 = c;
  while (n >= 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    c64 = _mm_crc32_u64(c64, word);
    p += 8;
    n -= 8;
  }
  c = static_cast<uint32_t>(c64);
#endif
  const auto& t = table();
  while (n-- > 0) c = t[(c ^ *p++) & 0xFFu] ^ (c >> 8);
  state_ = c;
}

void Crc32c::field(std::string_view s) {
  update(s);
  const char zero = '\0';
  update(&zero, 1);
}

std::string format_checksum(uint32_t crc) {
  static const char* kHex = "0123456789abcdef";
  std::string out = "crc32c:";
  for (int shift = 28; shift >= 0; shift -= 4) out += kHex[(crc >> shift) & 0xF];
  return out;
}

void digest_tensor(Crc32c& crc, const std::string& name, const char* dtype_code, const Shape& shape) {
  crc.field(name);
  crc.field(dtype_code);
  std::string extents;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) extents += ',';
    extents += std::to_string(shape[i]);
  }
  crc.field(extents);
}

void digest_metadata(Crc32c& crc, const std::map<std::string, std::string>& metadata) {
  for (const auto& [key, value] : metadata) {
    if (key == kChecksumKey) continue;
    crc.field(key);
    crc.field(value);
  }
}

}  // namespace crew::detail
