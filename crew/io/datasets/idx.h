#pragma once
// The IDX file format of MNIST / Fashion-MNIST (http://yann.lecun.com/exdb/mnist/):
// bytes 0-1 zero, byte 2 the element type (0x08 = uint8), byte 3 the number of dims, then
// one big-endian uint32 extent per dim, then the elements row-major.
#include <cstdint>
#include <string>
#include <vector>

namespace crew::io {

struct IdxArray {
  std::vector<int64_t> dims;
  std::vector<uint8_t> data;  // prod(dims) bytes
};

// Parses uint8 IDX data with `expected_dims` dims (bytes already decompressed). Any
// mismatch (magic, type, dim count, size) throws IOError naming `path` and the byte offset
// (an offset into the decompressed data for .gz files).
IdxArray parse_idx_uint8(const std::vector<uint8_t>& bytes, int expected_dims, const std::string& path);
// read_file_bytes (+ gunzip, bounded by the size the header declares) + parse_idx_uint8.
IdxArray read_idx_uint8(const std::string& path, int expected_dims);

}  // namespace crew::io
