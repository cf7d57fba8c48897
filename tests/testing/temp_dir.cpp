#include "tests/testing/temp_dir.h"

#include <cstdlib>
#include <filesystem>
#include <stdexcept>

namespace crew::testing {

TempDir::TempDir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "crew_test_XXXXXX").string();
  char* made = ::mkdtemp(tmpl.data());
  if (made == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = made;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace crew::testing
