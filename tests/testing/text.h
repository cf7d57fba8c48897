#pragma once
// Text helpers of the tests: substring search and whole-file reads.
#include <fstream>
#include <sstream>
#include <string>

namespace crew::testing {

// Whether `text` contains `needle`.
inline bool has(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

// The whole content of the file at `path` ("" when it cannot be read).
inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace crew::testing
