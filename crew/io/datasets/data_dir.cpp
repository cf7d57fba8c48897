#include "crew/io/datasets/data_dir.h"

#include "crew/core/env.h"

namespace crew::io::detail {

std::vector<std::string> data_dirs(const std::string& explicit_dir, const std::string& subdir,
                                   const std::string& default_dir) {
  if (!explicit_dir.empty()) return {explicit_dir};
  if (auto root = env::get("CREW_DATA_DIR")) return {*root + "/" + subdir, *root};
  return {default_dir};
}

std::string join(const std::vector<std::string>& items, const char* sep) {
  std::string out;
  for (size_t k = 0; k < items.size(); ++k) {
    if (k) out += sep;
    out += items[k];
  }
  return out;
}

}  // namespace crew::io::detail
