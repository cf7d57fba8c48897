#pragma once
// Whole-file reads for the data set loaders, with transparent gzip decompression.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace crew::io {

// The bytes of a file; IOError with the path and strerror on failure.
std::vector<uint8_t> read_file_bytes(const std::string& path);
// True if the bytes start with the gzip magic 1f 8b.
bool is_gzip(const std::vector<uint8_t>& bytes);
// Decompresses gzip data (one or more members). Bad or truncated data: IOError naming
// `what` (the file) and the compressed byte offset where decoding failed. Data that
// decompresses to more than max_bytes is an IOError naming the limit and limit_reason (why
// it is the limit, e.g. "the IDX header declares 784 bytes"): decompression stops there, so
// a small "gzip bomb" cannot ask for gigabytes.
std::vector<uint8_t> gunzip(const std::vector<uint8_t>& compressed, const std::string& what,
                            size_t max_bytes = SIZE_MAX, const std::string& limit_reason = "no limit");
// The first n decompressed bytes of gzip data (fewer when it is shorter), to read a header.
std::vector<uint8_t> gunzip_prefix(const std::vector<uint8_t>& compressed, const std::string& what, size_t n);
// read_file_bytes, then gunzip if the file is gzip-compressed.
std::vector<uint8_t> read_maybe_gzip(const std::string& path);
bool file_exists(const std::string& path);
bool is_directory(const std::string& path);

}  // namespace crew::io
