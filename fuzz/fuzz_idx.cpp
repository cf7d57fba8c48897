// The IDX reader of MNIST / Fashion-MNIST (crew/io/datasets/idx.*), gzipped or not, on
// arbitrary bytes. The first input byte picks the expected dim count (1..4; MNIST uses 1 for
// labels and 3 for images); the rest is the file, gunzipped first when it has the gzip magic,
// exactly as read_idx_uint8 does with a file. Invariants:
//   - gunzip and parse_idx_uint8 throw crew::Error (IOError) or succeed, nothing else;
//   - a parsed array has the expected number of dims, each in 1..2^28, and exactly
//     prod(dims) data bytes, which are the tail of the (decompressed) input.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "crew/core/error.h"
#include "crew/io/datasets/idx.h"
#include "crew/io/file_bytes.h"
#include "fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const int dims = 1 + data[0] % 4;
  std::vector<uint8_t> bytes(data + 1, data + size);
  try {
    if (crew::io::is_gzip(bytes)) bytes = crew::io::gunzip(bytes, "fuzz input");
    crew::io::IdxArray a = crew::io::parse_idx_uint8(bytes, dims, "fuzz input");
    FUZZ_CHECK(a.dims.size() == static_cast<size_t>(dims), "wrong number of dims");
    uint64_t numel = 1;
    for (int64_t d : a.dims) {
      FUZZ_CHECK(d >= 1 && d <= (int64_t{1} << 28), "implausible extent accepted");
      FUZZ_CHECK(!__builtin_mul_overflow(numel, static_cast<uint64_t>(d), &numel), "dims overflow uint64");
    }
    FUZZ_CHECK(a.data.size() == numel, "data size != prod(dims)");
    FUZZ_CHECK(a.data.size() <= bytes.size(), "more data than input");
    FUZZ_CHECK(a.data.empty() || std::memcmp(a.data.data(), bytes.data() + bytes.size() - a.data.size(),
                                             a.data.size()) == 0,
               "data is not the input's tail");
  } catch (const crew::Error&) {
  }
  return 0;
}
