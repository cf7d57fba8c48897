#include "crew/core/id_list.h"

#include <algorithm>
#include <cctype>

#include "crew/core/check.h"

namespace crew {

std::vector<int> parse_id_list(const std::string& text, const char* what) {
  std::vector<int> ids;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(start, end - start);
    CREW_CHECK(!item.empty() && item.size() <= 6 &&
                   std::all_of(item.begin(), item.end(), [](unsigned char c) { return std::isdigit(c); }),
               what, "='", text, "': '", item, "' is not a device id (expected comma-separated non-negative integers)");
    const int id = std::stoi(item);  // at most 6 digits: no overflow
    CREW_CHECK(std::find(ids.begin(), ids.end(), id) == ids.end(), what, "='", text, "': device ", id,
               " is listed twice");
    ids.push_back(id);
    start = end + 1;
  }
  return ids;
}

}  // namespace crew
