#include "crew/io/datasets/idx.h"

#include <cstdint>

#include "crew/core/check.h"
#include "crew/io/file_bytes.h"

namespace crew::io {
namespace {

uint32_t read_be32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

// The parsed header of a uint8 IDX file: its dims, its size and the element count it declares.
struct IdxHeader {
  std::vector<int64_t> dims;
  size_t header_bytes = 0;
  uint64_t numel = 1;
};

IdxHeader parse_idx_header(const std::vector<uint8_t>& bytes, int expected_dims, const std::string& path) {
  CREW_CHECK_T(IOError, bytes.size() >= 4, "IDX file ", path, ": truncated header: ", bytes.size(),
               " bytes, need at least 4 at offset 0");
  CREW_CHECK_T(IOError, bytes[0] == 0 && bytes[1] == 0, "IDX file ", path,
               ": bad magic at offset 0: first two bytes must be 0 (is this an IDX file?)");
  CREW_CHECK_T(IOError, bytes[2] == 0x08, "IDX file ", path, ": element type 0x", std::hex, int{bytes[2]}, std::dec,
               " at offset 2, expected 0x08 (uint8)");
  CREW_CHECK_T(IOError, bytes[3] == expected_dims, "IDX file ", path, ": ", int{bytes[3]},
               " dims at offset 3, expected ", expected_dims);
  IdxHeader h;
  h.header_bytes = 4 + 4 * static_cast<size_t>(expected_dims);
  CREW_CHECK_T(IOError, bytes.size() >= h.header_bytes, "IDX file ", path,
               ": truncated header: ", bytes.size(), " bytes, the dims need ", h.header_bytes);
  for (int d = 0; d < expected_dims; ++d) {
    uint32_t extent = read_be32(bytes.data() + 4 + 4 * d);
    CREW_CHECK_T(IOError, extent > 0 && extent <= (1u << 28), "IDX file ", path, ": dim ", d, " = ", extent,
                 " at offset ", 4 + 4 * d, " is not a plausible extent");
    h.dims.push_back(extent);
    // Three extents of up to 2^28 can wrap uint64 (2^28 * 2^28 * 2^8 = 2^64, i.e. "0 bytes").
    CREW_CHECK_T(IOError, !__builtin_mul_overflow(h.numel, uint64_t{extent}, &h.numel), "IDX file ", path,
                 ": the dims up to dim ", d, " (offset ", 4 + 4 * d, ") hold more than 2^64 elements");
  }
  return h;
}

// The decompressed bytes of a gzip IDX file, never more than its header declares: the
// header is inflated first, then the whole file with that size as the bound.
std::vector<uint8_t> gunzip_idx(const std::vector<uint8_t>& compressed, int expected_dims,
                                const std::string& path) {
  const size_t header_bytes = 4 + 4 * static_cast<size_t>(expected_dims);
  const IdxHeader h = parse_idx_header(gunzip_prefix(compressed, path, header_bytes), expected_dims, path);
  CREW_CHECK_T(IOError, h.numel <= SIZE_MAX - h.header_bytes, "IDX file ", path, ": the header declares ",
               h.numel, " bytes, more than this machine can address");
  const size_t declared = h.header_bytes + static_cast<size_t>(h.numel);
  return gunzip(
      compressed, path, declared,
      str_cat("the IDX header declares ", h.numel, " data bytes after a ", h.header_bytes, "-byte header"));
}

}  // namespace

IdxArray parse_idx_uint8(const std::vector<uint8_t>& bytes, int expected_dims, const std::string& path) {
  const IdxHeader h = parse_idx_header(bytes, expected_dims, path);
  const size_t header = h.header_bytes;
  const uint64_t numel = h.numel;
  CREW_CHECK_T(IOError, bytes.size() - header >= numel, "IDX file ", path,
               ": truncated data: the header at offset 4", " promises ", numel, " bytes from offset ", header,
               ", but the data ends at offset ", bytes.size());
  CREW_CHECK_T(IOError, bytes.size() - header == numel, "IDX file ", path, ": ",
               bytes.size() - header - numel, " unexpected trailing bytes after offset ", header + numel);
  IdxArray out;
  out.dims = h.dims;
  out.data.assign(bytes.begin() + static_cast<std::ptrdiff_t>(header), bytes.end());
  return out;
}

IdxArray read_idx_uint8(const std::string& path, int expected_dims) {
  std::vector<uint8_t> bytes = read_file_bytes(path);
  if (is_gzip(bytes)) bytes = gunzip_idx(bytes, expected_dims, path);
  return parse_idx_uint8(bytes, expected_dims, path);
}

}  // namespace crew::io
