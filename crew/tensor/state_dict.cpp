#include "crew/tensor/state_dict.h"

#include "crew/core/check.h"

namespace crew {

void StateDict::insert(const std::string& key, const Tensor& value) {
  CREW_CHECK(value.defined(), "StateDict::insert: tensor for key '", key, "' is undefined");
  CREW_CHECK(!contains(key), "StateDict::insert: duplicate key '", key, "'");
  index_.emplace(key, entries_.size());
  entries_.emplace_back(key, value);
}

void StateDict::set(const std::string& key, const Tensor& value) {
  CREW_CHECK(value.defined(), "StateDict::set: tensor for key '", key, "' is undefined");
  auto it = index_.find(key);
  if (it == index_.end()) {
    insert(key, value);
  } else {
    entries_[it->second].second = value;
  }
}

const Tensor& StateDict::at(const std::string& key) const {
  auto it = index_.find(key);
  if (it == index_.end()) {
    CREW_THROW(IndexError, "StateDict::at: no key '", key, "' (", entries_.size(), " keys)");
  }
  return entries_[it->second].second;
}

bool StateDict::erase(const std::string& key) {
  auto it = index_.find(key);
  if (it == index_.end()) return false;
  size_t pos = it->second;
  index_.erase(it);
  entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(pos));
  for (size_t i = pos; i < entries_.size(); ++i) index_[entries_[i].first] = i;
  return true;
}

std::vector<std::string> StateDict::keys() const {
  std::vector<std::string> out;
  out.reserve(entries_.size());
  for (const auto& e : entries_) out.push_back(e.first);
  return out;
}

}  // namespace crew
