// The in-memory tar reader (crew/io/tar_reader.*) that Cifar10 uses on cifar-10-binary.tar.gz,
// on arbitrary bytes (gunzipped first when they have the gzip magic). Invariants:
//   - gunzip and list_tar throw crew::Error (IOError) or succeed, nothing else;
//   - every member's data starts on a 512-byte block after its header, lies inside the
//     archive, and members come in archive order without overlapping.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "crew/core/error.h"
#include "crew/io/file_bytes.h"
#include "crew/io/tar_reader.h"
#include "fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<uint8_t> bytes(data, data + size);
  try {
    if (crew::io::is_gzip(bytes)) bytes = crew::io::gunzip(bytes, "fuzz input");
    std::vector<crew::io::TarMember> members = crew::io::list_tar(bytes, "fuzz input");
    size_t end = 0;
    for (const auto& m : members) {
      FUZZ_CHECK(m.data_offset % 512 == 0 && m.data_offset >= 512, "member data not block-aligned");
      FUZZ_CHECK(m.data_offset >= end + 512, "members overlap or are out of order");
      FUZZ_CHECK(m.size <= bytes.size() && m.data_offset <= bytes.size() - m.size, "member past the end");
      end = m.data_offset + m.size;
    }
  } catch (const crew::Error&) {
  }
  return 0;
}
