#pragma once
// Damaging a file on purpose, for tests of verification (checkpoints, safetensors).
#include <gtest/gtest.h>

#include <fstream>
#include <string>

namespace crew::testing {

// Flips bits of the last byte of `path` in place (size unchanged): a checksum must catch it.
inline void flip_last_byte(const std::string& path) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  ASSERT_TRUE(f.good()) << "flip_last_byte: cannot open " << path;
  f.seekg(-1, std::ios::end);
  char c = 0;
  f.get(c);
  f.seekp(-1, std::ios::end);
  f.put(static_cast<char>(c ^ 0x5a));
}

}  // namespace crew::testing
