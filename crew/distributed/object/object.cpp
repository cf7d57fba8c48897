#include "crew/distributed/object/object.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ostream>

#include "crew/core/check.h"

namespace crew::dist {
namespace {

std::string repr_float(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*e", precision - 1, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  // buf = d.ddde[+-]XX: split mantissa digits and exponent, then format as Python's repr.
  std::string s(buf);
  bool negative = s[0] == '-';
  if (negative) s = s.substr(1);
  size_t e = s.find('e');
  std::string mantissa = s.substr(0, e);
  int exponent = std::atoi(s.c_str() + e + 1);
  std::string digits;
  for (char c : mantissa)
    if (c != '.') digits += c;
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  std::string out;
  if (exponent >= -4 && exponent < 16) {
    if (exponent < 0) {
      out = "0." + std::string(static_cast<size_t>(-exponent - 1), '0') + digits;
    } else if (static_cast<int>(digits.size()) <= exponent + 1) {
      out = digits + std::string(static_cast<size_t>(exponent + 1 - static_cast<int>(digits.size())), '0') +
            ".0";
    } else {
      out = digits.substr(0, static_cast<size_t>(exponent + 1)) + "." +
            digits.substr(static_cast<size_t>(exponent + 1));
    }
  } else {
    out = digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    char ebuf[16];
    std::snprintf(ebuf, sizeof(ebuf), "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
    out += ebuf;
  }
  return negative ? "-" + out : out;
}

std::string repr_text(const std::string& s, bool is_bytes) {
  const bool has_single = s.find('\'') != std::string::npos;
  const bool has_double = s.find('"') != std::string::npos;
  const char quote = (has_single && !has_double) ? '"' : '\'';
  std::string out = is_bytes ? "b" : "";
  out += quote;
  for (unsigned char c : s) {
    if (c == '\\')
      out += "\\\\";
    else if (c == static_cast<unsigned char>(quote))
      out += std::string("\\") + quote;
    else if (c == '\n')
      out += "\\n";
    else if (c == '\r')
      out += "\\r";
    else if (c == '\t')
      out += "\\t";
    else if (c < 0x20 || c == 0x7f || (is_bytes && c >= 0x80)) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  out += quote;
  return out;
}

void check_kind(Object::Kind have, Object::Kind want, const char* op) {
  CREW_CHECK(have == want, "Object::", op, ": object is ", kind_name(have), ", not ", kind_name(want));
}

}  // namespace

const char* kind_name(Object::Kind kind) {
  switch (kind) {
    case Object::Kind::NONE:
      return "None";
    case Object::Kind::BOOL:
      return "bool";
    case Object::Kind::INT:
      return "int";
    case Object::Kind::FLOAT:
      return "float";
    case Object::Kind::STR:
      return "str";
    case Object::Kind::BYTES:
      return "bytes";
    case Object::Kind::LIST:
      return "list";
    case Object::Kind::DICT:
      return "dict";
  }
  return "unknown";
}

Object Object::bytes(std::string data) {
  Object o;
  o.kind_ = Kind::BYTES;
  o.str_ = std::move(data);
  return o;
}

Object Object::list(Items items) {
  Object o;
  o.kind_ = Kind::LIST;
  o.list_ = std::make_shared<Items>(std::move(items));
  return o;
}

Object Object::dict(std::vector<std::pair<std::string, Object>> items) {
  Pairs pairs;
  pairs.reserve(items.size());
  for (auto& [k, v] : items) pairs.emplace_back(Object(k), std::move(v));
  return dict_of(std::move(pairs));
}

Object Object::dict_of(Pairs items) {
  Object o;
  o.kind_ = Kind::DICT;
  o.dict_ = std::make_shared<Pairs>();
  for (auto& [k, v] : items) o.set(std::move(k), std::move(v));
  return o;
}

bool Object::as_bool() const {
  check_kind(kind_, Kind::BOOL, "as_bool");
  return int_ != 0;
}
int64_t Object::as_int() const {
  check_kind(kind_, Kind::INT, "as_int");
  return int_;
}
double Object::as_float() const {
  if (kind_ == Kind::INT) return static_cast<double>(int_);
  check_kind(kind_, Kind::FLOAT, "as_float");
  return float_;
}
const std::string& Object::as_str() const {
  check_kind(kind_, Kind::STR, "as_str");
  return str_;
}
const std::string& Object::as_bytes() const {
  check_kind(kind_, Kind::BYTES, "as_bytes");
  return str_;
}
const Object::Items& Object::as_list() const {
  check_kind(kind_, Kind::LIST, "as_list");
  return *list_;
}
const Object::Pairs& Object::as_dict() const {
  check_kind(kind_, Kind::DICT, "as_dict");
  return *dict_;
}

const Object& Object::at(const std::string& key) const {
  for (auto& [k, v] : as_dict())
    if (k.kind_ == Kind::STR && k.str_ == key) return v;
  CREW_THROW(IndexError, "Object::at: no key '", key, "' in ", repr());
}

const Object& Object::operator[](size_t i) const {
  const Items& items = as_list();
  CREW_CHECK_T(IndexError, i < items.size(), "Object: list index ", i, " out of range (size ", items.size(),
               ")");
  return items[i];
}

size_t Object::size() const {
  switch (kind_) {
    case Kind::LIST:
      return list_->size();
    case Kind::DICT:
      return dict_->size();
    case Kind::STR:
    case Kind::BYTES:
      return str_.size();
    default:
      CREW_THROW(ValueError, "Object::size: ", kind_name(kind_), " has no length");
  }
}

Object& Object::append(Object item) {
  check_kind(kind_, Kind::LIST, "append");
  if (list_.use_count() > 1) list_ = std::make_shared<Items>(*list_);
  list_->push_back(std::move(item));
  return *this;
}

Object& Object::set(Object key, Object value) {
  check_kind(kind_, Kind::DICT, "set");
  CREW_CHECK(key.kind_ == Kind::STR || key.kind_ == Kind::INT || key.kind_ == Kind::BOOL ||
                 key.kind_ == Kind::NONE || key.kind_ == Kind::FLOAT || key.kind_ == Kind::BYTES,
             "Object: a ", kind_name(key.kind_), " cannot be a dict key (unhashable)");
  if (dict_.use_count() > 1) dict_ = std::make_shared<Pairs>(*dict_);
  for (auto& [k, v] : *dict_) {
    if (k == key) {
      v = std::move(value);
      return *this;
    }
  }
  dict_->emplace_back(std::move(key), std::move(value));
  return *this;
}

std::string Object::repr() const {
  switch (kind_) {
    case Kind::NONE:
      return "None";
    case Kind::BOOL:
      return int_ ? "True" : "False";
    case Kind::INT:
      return std::to_string(int_);
    case Kind::FLOAT:
      return repr_float(float_);
    case Kind::STR:
      return repr_text(str_, false);
    case Kind::BYTES:
      return repr_text(str_, true);
    case Kind::LIST: {
      std::string out = "[";
      for (size_t i = 0; i < list_->size(); ++i) out += (i ? ", " : "") + (*list_)[i].repr();
      return out + "]";
    }
    case Kind::DICT: {
      std::string out = "{";
      for (size_t i = 0; i < dict_->size(); ++i)
        out += (i ? ", " : "") + (*dict_)[i].first.repr() + ": " + (*dict_)[i].second.repr();
      return out + "}";
    }
  }
  return "?";
}

bool Object::operator==(const Object& o) const {
  // Python: 1 == 1.0 == True; we compare kinds strictly except int/float/bool numerics.
  auto numeric = [](Kind k) { return k == Kind::INT || k == Kind::BOOL || k == Kind::FLOAT; };
  if (numeric(kind_) && numeric(o.kind_)) {
    if (kind_ == Kind::FLOAT || o.kind_ == Kind::FLOAT) return as_number() == o.as_number();
    return int_ == o.int_;
  }
  if (kind_ != o.kind_) return false;
  switch (kind_) {
    case Kind::NONE:
      return true;
    case Kind::STR:
    case Kind::BYTES:
      return str_ == o.str_;
    case Kind::LIST:
      return *list_ == *o.list_;
    case Kind::DICT:
      return *dict_ == *o.dict_;
    default:
      return false;
  }
}

std::ostream& operator<<(std::ostream& os, const Object& obj) { return os << obj.repr(); }

std::string repr(const std::vector<Object>& objects) {
  std::string out = "[";
  for (size_t i = 0; i < objects.size(); ++i) out += (i ? ", " : "") + objects[i].repr();
  return out + "]";
}

std::ostream& operator<<(std::ostream& os, const std::vector<Object>& objects) { return os << repr(objects); }

}  // namespace crew::dist
