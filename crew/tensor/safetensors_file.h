#pragma once
// Internal helpers of crew/tensor/safetensors*.cpp: loop-until-done read/write calls that
// turn OS failures into IOError naming the path (UniqueFd is crew/core/unique_fd.h).
#include <cstddef>
#include <cstdint>
#include <string>

#include "crew/core/unique_fd.h"

namespace crew::detail {

using crew::UniqueFd;

// Reads exactly n bytes at offset; returns the number of bytes read before end of file
// (less than n only when the file is shorter). IOError on a read failure.
size_t pread_full(int fd, void* buf, size_t n, uint64_t offset, const std::string& path);
// Writes all n bytes; IOError on failure.
void write_full(int fd, const void* buf, size_t n, const std::string& path);

}  // namespace crew::detail
