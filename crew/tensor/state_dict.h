#pragma once
// crew::StateDict: an insertion-ordered map from names to tensors, the unit of checkpoints
// (Layer::state_dict, Optimizer::state_dict, crew::save / crew::load).
//
//   StateDict sd;
//   sd.insert("linear1.weight", w);
//   for (const auto& [name, t] : sd) std::cout << name << " " << shape_str(t.shape()) << "\n";
//   Tensor b = sd.at("linear1.bias");   // IndexError naming the key if absent
#include <cstddef>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "crew/tensor/tensor.h"

namespace crew {

class StateDict {
 public:
  using Entry = std::pair<std::string, Tensor>;
  using const_iterator = std::vector<Entry>::const_iterator;

  StateDict() = default;

  // Adds a new key at the end; ValueError if the key exists or the tensor is undefined.
  void insert(const std::string& key, const Tensor& value);
  // Replaces the value of an existing key (keeping its position) or appends a new one.
  void set(const std::string& key, const Tensor& value);
  // The tensor under key; IndexError naming the key otherwise.
  const Tensor& at(const std::string& key) const;
  bool contains(const std::string& key) const { return index_.count(key) != 0; }
  // Removes key if present; returns whether it was.
  bool erase(const std::string& key);

  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  // Keys in insertion order.
  std::vector<std::string> keys() const;

  const_iterator begin() const { return entries_.begin(); }
  const_iterator end() const { return entries_.end(); }

 private:
  std::vector<Entry> entries_;
  std::unordered_map<std::string, size_t> index_;  // key -> position in entries_
};

}  // namespace crew
