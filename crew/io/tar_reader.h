#pragma once
// A reader for (ustar / GNU) tar archives held in memory: regular-file members only.
#include <cstdint>
#include <string>
#include <vector>

namespace crew::io {

struct TarMember {
  std::string name;      // full path inside the archive
  size_t data_offset;    // offset of the contents in the archive bytes
  size_t size;           // bytes
};

// Lists the regular files of a tar archive. A bad header checksum, a bad size field or a
// member running past the end throws IOError naming `what` and the header's byte offset.
std::vector<TarMember> list_tar(const std::vector<uint8_t>& archive, const std::string& what);

}  // namespace crew::io
