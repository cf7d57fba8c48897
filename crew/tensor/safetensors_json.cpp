#include "crew/tensor/safetensors_json.h"

#include <unordered_set>

#include "crew/core/check.h"

namespace crew::detail::json {
namespace {

class Parser {
 public:
  explicit Parser(std::string_view text) : s_(text) {}

  Value document() {
    skip_ws();
    Value v = value(0);
    skip_ws();
    if (pos_ != s_.size()) fail("trailing characters after the document");
    return v;
  }

 private:
  [[noreturn]] void fail(const char* what) const {
    CREW_THROW(ValueError, "json: ", what, " at byte ", pos_);
  }
  bool at_end() const { return pos_ >= s_.size(); }
  char peek() const { return at_end() ? '\0' : s_[pos_]; }
  void skip_ws() {
    while (!at_end() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) ++pos_;
  }
  void expect(char c, const char* what) {
    if (peek() != c || at_end()) fail(what);
    ++pos_;
  }
  void literal(std::string_view word) {
    if (s_.substr(pos_, word.size()) != word) fail("invalid literal");
    pos_ += word.size();
  }

  Value value(int depth) {
    if (depth > kMaxDepth) fail("nesting too deep");
    if (at_end()) fail("unexpected end of input");
    Value v;
    char c = s_[pos_];
    if (c == '{') {
      v.kind = Value::Kind::OBJECT;
      parse_object(v, depth);
    } else if (c == '[') {
      v.kind = Value::Kind::ARRAY;
      parse_array(v, depth);
    } else if (c == '"') {
      v.kind = Value::Kind::STRING;
      v.text = string();
    } else if (c == 't') {
      literal("true");
      v.kind = Value::Kind::BOOL;
      v.boolean = true;
    } else if (c == 'f') {
      literal("false");
      v.kind = Value::Kind::BOOL;
    } else if (c == 'n') {
      literal("null");
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      v.kind = Value::Kind::NUMBER;
      v.text = number();
    } else {
      fail("unexpected character");
    }
    return v;
  }

  void parse_object(Value& v, int depth) {
    std::unordered_set<std::string> seen;
    elements('}', "expected ',' or '}'", [&] {
      if (peek() != '"' || at_end()) fail("expected a string key");
      std::string key = string();
      if (!seen.insert(key).second) fail("duplicate object key");
      skip_ws();
      expect(':', "expected ':'");
      skip_ws();
      v.object.emplace_back(std::move(key), value(depth + 1));
    });
  }

  void parse_array(Value& v, int depth) {
    elements(']', "expected ',' or ']'", [&] { v.array.push_back(value(depth + 1)); });
  }

  // From the opening bracket: element() for each ','-separated element, up to `close`.
  template <typename Element>
  void elements(char close, const char* close_error, const Element& element) {
    ++pos_;  // '{' or '['
    skip_ws();
    if (peek() == close && !at_end()) {
      ++pos_;
      return;
    }
    while (true) {
      skip_ws();
      element();
      skip_ws();
      if (peek() == ',' && !at_end()) {
        ++pos_;
        continue;
      }
      expect(close, close_error);
      return;
    }
  }

  std::string number() {
    size_t start = pos_;
    if (peek() == '-') ++pos_;
    if (at_end() || !isdigit(peek())) fail("invalid number");
    if (peek() == '0') {
      ++pos_;
    } else {
      while (!at_end() && isdigit(peek())) ++pos_;
    }
    if (!at_end() && peek() == '.') {
      ++pos_;
      if (at_end() || !isdigit(peek())) fail("invalid number fraction");
      while (!at_end() && isdigit(peek())) ++pos_;
    }
    if (!at_end() && (peek() == 'e' || peek() == 'E')) {
      ++pos_;
      if (!at_end() && (peek() == '+' || peek() == '-')) ++pos_;
      if (at_end() || !isdigit(peek())) fail("invalid number exponent");
      while (!at_end() && isdigit(peek())) ++pos_;
    }
    return std::string(s_.substr(start, pos_ - start));
  }

  static bool isdigit(char c) { return c >= '0' && c <= '9'; }

  unsigned hex4() {
    if (s_.size() - pos_ < 4) fail("truncated \\u escape");
    unsigned cp = 0;
    for (int i = 0; i < 4; ++i) {
      char c = s_[pos_++];
      cp <<= 4;
      if (c >= '0' && c <= '9')
        cp |= static_cast<unsigned>(c - '0');
      else if (c >= 'a' && c <= 'f')
        cp |= static_cast<unsigned>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F')
        cp |= static_cast<unsigned>(c - 'A' + 10);
      else
        fail("invalid hex digit in \\u escape");
    }
    return cp;
  }

  static void append_utf8(std::string& out, unsigned cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  std::string string() {
    ++pos_;  // opening quote
    std::string out;
    while (true) {
      if (at_end()) fail("unterminated string");
      char c = s_[pos_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) fail("unescaped control character in string");
      if (c == '\\') {
        escape(out);
      } else {
        out += c;
      }
    }
  }

  // After a backslash: appends the escaped character (UTF-8 for \u escapes).
  void escape(std::string& out) {
    if (at_end()) fail("unterminated escape");
    char e = s_[pos_++];
    if (e == 'u') {
      append_utf8(out, code_point());
      return;
    }
    static constexpr std::string_view kEscaped = "\"\\/bfnrt";
    static constexpr std::string_view kMeaning = "\"\\/\b\f\n\r\t";
    const size_t k = kEscaped.find(e);
    if (k == std::string_view::npos) fail("invalid escape");
    out += kMeaning[k];
  }

  // After "\u": the code point of one escape, or of a surrogate pair of two.
  unsigned code_point() {
    unsigned cp = hex4();
    if (cp >= 0xD800 && cp <= 0xDBFF) {
      if (s_.substr(pos_, 2) != "\\u") fail("unpaired surrogate in \\u escape");
      pos_ += 2;
      unsigned lo = hex4();
      if (lo < 0xDC00 || lo > 0xDFFF) fail("invalid low surrogate in \\u escape");
      cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
    } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
      fail("unpaired surrogate in \\u escape");
    }
    return cp;
  }

  std::string_view s_;
  size_t pos_ = 0;
};

}  // namespace

Value::Value() = default;
Value::Value(const Value&) = default;
Value::Value(Value&&) noexcept = default;
Value& Value::operator=(const Value&) = default;
Value& Value::operator=(Value&&) noexcept = default;
Value::~Value() = default;

const Value* Value::find(std::string_view key) const {
  for (const auto& member : object) {
    if (member.first == key) return &member.second;
  }
  return nullptr;
}

Value parse(std::string_view text) { return Parser(text).document(); }

bool to_uint64(const Value& v, uint64_t* out) {
  if (!v.is_number() || v.text.empty()) return false;
  uint64_t x = 0;
  for (char c : v.text) {
    if (c < '0' || c > '9') return false;
    uint64_t d = static_cast<uint64_t>(c - '0');
    if (x > (UINT64_MAX - d) / 10) return false;
    x = x * 10 + d;
  }
  if (v.text.size() > 1 && v.text[0] == '0') return false;
  *out = x;
  return true;
}

std::string quote(std::string_view s) {
  static const char* kHex = "0123456789abcdef";
  std::string out;
  out.reserve(s.size() + 2);
  out += '"';
  for (char c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    if (c == '"')
      out += "\\\"";
    else if (c == '\\')
      out += "\\\\";
    else if (u < 0x20) {
      out += "\\u00";
      out += kHex[u >> 4];
      out += kHex[u & 0xF];
    } else {
      out += c;
    }
  }
  out += '"';
  return out;
}

}  // namespace crew::detail::json
