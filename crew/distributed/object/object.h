#pragma once
// crew::dist::Object: a Python-like value for the object collectives (all_gather_object,
// broadcast_object_list, scatter_object_list): None, bool, int, float, str, bytes, list and
// dict (insertion-ordered; str or int keys). It prints as Python's repr does and has a safe
// binary encoding: decoding never runs code, checks every length against the input and the
// limits, and throws ValueError with the byte offset on malformed input.
//
//   Object obj = Object::dict({{"foo", Object::list({1, 2, 3})}});
//   std::cout << obj;                                  // {'foo': [1, 2, 3]}
//   std::vector<uint8_t> wire = obj.encode();
//   Object back = Object::decode(wire.data(), wire.size());
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace crew::dist {

struct DecodeLimits {
  size_t max_bytes = 64u << 20;
  size_t max_depth = 64;
  size_t max_elems = 1u << 22;  // total values in the tree
};

class Object {
 public:
  enum class Kind : uint8_t { NONE, BOOL, INT, FLOAT, STR, BYTES, LIST, DICT };
  using Items = std::vector<Object>;
  using Pairs = std::vector<std::pair<Object, Object>>;

  Object() = default;  // None
  Object(bool v) : kind_(Kind::BOOL), int_(v) {}
  Object(int v) : kind_(Kind::INT), int_(v) {}
  Object(long v) : kind_(Kind::INT), int_(v) {}
  Object(long long v) : kind_(Kind::INT), int_(v) {}
  Object(unsigned v) : kind_(Kind::INT), int_(v) {}
  Object(unsigned long v) : kind_(Kind::INT), int_(static_cast<int64_t>(v)) {}
  Object(double v) : kind_(Kind::FLOAT), float_(v) {}
  Object(const char* s) : kind_(Kind::STR), str_(s) {}
  Object(std::string s) : kind_(Kind::STR), str_(std::move(s)) {}

  static Object none() { return Object(); }
  static Object bytes(std::string data);
  static Object list(Items items);
  static Object dict(std::vector<std::pair<std::string, Object>> items);  // str keys
  static Object dict_of(Pairs items);                                     // any keys

  Kind kind() const { return kind_; }
  bool is_none() const { return kind_ == Kind::NONE; }
  // Typed access; ValueError naming both kinds on a mismatch.
  bool as_bool() const;
  int64_t as_int() const;
  double as_float() const;  // ints convert
  const std::string& as_str() const;
  const std::string& as_bytes() const;
  const Items& as_list() const;
  const Pairs& as_dict() const;
  // dict lookup by str key; IndexError naming the key.
  const Object& at(const std::string& key) const;
  const Object& operator[](size_t i) const;
  size_t size() const;                    // list/dict/str/bytes length
  Object& append(Object item);            // list only
  Object& set(Object key, Object value);  // dict only; replaces an equal key in place

  // Python's repr.
  std::string repr() const;
  std::vector<uint8_t> encode() const;
  static Object decode(const uint8_t* data, size_t size, const DecodeLimits& limits = {});
  static Object decode(const std::vector<uint8_t>& data, const DecodeLimits& limits = {}) {
    return decode(data.data(), data.size(), limits);
  }

  bool operator==(const Object& other) const;
  bool operator!=(const Object& other) const { return !(*this == other); }

 private:
  double as_number() const { return kind_ == Kind::FLOAT ? float_ : static_cast<double>(int_); }
  Kind kind_ = Kind::NONE;
  int64_t int_ = 0;
  double float_ = 0;
  std::string str_;  // str and bytes
  std::shared_ptr<Items> list_;
  std::shared_ptr<Pairs> dict_;
  friend class ObjectCodec;
};

const char* kind_name(Object::Kind kind);
std::ostream& operator<<(std::ostream& os, const Object& obj);
// "[a, b, ...]" of a vector of objects, as Python prints a list.
std::string repr(const std::vector<Object>& objects);
std::ostream& operator<<(std::ostream& os, const std::vector<Object>& objects);

}  // namespace crew::dist

namespace crew {
using dist::Object;
}
