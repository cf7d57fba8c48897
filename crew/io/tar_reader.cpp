#include "crew/io/tar_reader.h"

#include <algorithm>

#include "crew/core/check.h"

namespace crew::io {
namespace {

constexpr size_t kBlock = 512;

std::string field(const uint8_t* p, size_t len) {
  size_t n = 0;
  while (n < len && p[n] != 0) ++n;
  return std::string(reinterpret_cast<const char*>(p), n);
}

// Parses an octal numeric field (spaces/NULs around the digits are allowed).
bool parse_octal(const uint8_t* p, size_t len, uint64_t* out) {
  uint64_t v = 0;
  size_t i = 0;
  while (i < len && (p[i] == ' ' || p[i] == 0)) ++i;
  bool any = false;
  for (; i < len && p[i] >= '0' && p[i] <= '7'; ++i) {
    v = v * 8 + (p[i] - '0');
    any = true;
  }
  for (; i < len; ++i) {
    if (p[i] != ' ' && p[i] != 0) return false;
  }
  *out = v;
  return any;
}

}  // namespace

std::vector<TarMember> list_tar(const std::vector<uint8_t>& archive, const std::string& what) {
  std::vector<TarMember> members;
  std::string long_name;  // from a GNU 'L' record, applies to the next member
  size_t pos = 0;
  while (true) {
    CREW_CHECK_T(IOError, pos + kBlock <= archive.size(), "tar ", what, ": truncated archive: header at offset ", pos,
                 " runs past the end (", archive.size(), " bytes) without the end-of-archive marker");
    const uint8_t* h = archive.data() + pos;
    if (std::all_of(h, h + kBlock, [](uint8_t b) { return b == 0; })) break;  // end of archive
    uint64_t stored_sum = 0;
    CREW_CHECK_T(IOError, parse_octal(h + 148, 8, &stored_sum), "tar ", what, ": bad checksum field in the header at offset ",
                 pos);
    uint64_t sum = 0;
    for (size_t k = 0; k < kBlock; ++k) sum += (k >= 148 && k < 156) ? uint8_t{' '} : h[k];
    CREW_CHECK_T(IOError, sum == stored_sum, "tar ", what, ": header checksum mismatch at offset ", pos, " (stored ",
                 stored_sum, ", computed ", sum, "): corrupt archive");
    uint64_t size = 0;
    CREW_CHECK_T(IOError, parse_octal(h + 124, 12, &size), "tar ", what, ": bad size field in the header at offset ", pos);
    const size_t data = pos + kBlock;
    CREW_CHECK_T(IOError, size <= archive.size() - data, "tar ", what, ": truncated archive: member at offset ", pos,
                 " needs ", size, " bytes but only ", archive.size() - data, " remain");
    const char type = static_cast<char>(h[156]);
    std::string name = field(h, 100);
    if (field(h + 257, 6) == "ustar") {
      std::string prefix = field(h + 345, 155);
      if (!prefix.empty()) name = prefix + "/" + name;
    }
    if (type == 'L') {
      long_name = field(archive.data() + data, static_cast<size_t>(size));
    } else {
      if (!long_name.empty()) name = long_name;
      long_name.clear();
      if (type == '0' || type == '\0') members.push_back({name, data, static_cast<size_t>(size)});
    }
    pos = data + (static_cast<size_t>(size) + kBlock - 1) / kBlock * kBlock;
  }
  return members;
}

}  // namespace crew::io
