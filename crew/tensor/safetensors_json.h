#pragma once
// A small, strict JSON reader and string quoter for safetensors headers. Not a general
// JSON library: numbers are kept as their source text (safetensors only needs exact
// non-negative integers), objects keep their key order, and nesting is capped so that
// hostile input cannot exhaust the stack.
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace crew::detail::json {

struct Value {
  enum class Kind { NUL, BOOL, NUMBER, STRING, ARRAY, OBJECT };
  Kind kind = Kind::NUL;
  bool boolean = false;
  std::string text;  // STRING: the decoded string; NUMBER: the number as written
  std::vector<Value> array;
  std::vector<std::pair<std::string, Value>> object;  // in source order, keys unique

  // Defined in the .cpp, where Value is complete: an implicit destructor here would make
  // clang instantiate std::pair<std::string, Value> while Value is still incomplete.
  Value();
  Value(const Value&);
  Value(Value&&) noexcept;
  Value& operator=(const Value&);
  Value& operator=(Value&&) noexcept;
  ~Value();

  bool is_object() const { return kind == Kind::OBJECT; }
  bool is_array() const { return kind == Kind::ARRAY; }
  bool is_string() const { return kind == Kind::STRING; }
  bool is_number() const { return kind == Kind::NUMBER; }
  // The member named key, or nullptr.
  const Value* find(std::string_view key) const;
};

// Maximum nesting depth parse() accepts.
inline constexpr int kMaxDepth = 64;

// Parses one JSON document (surrounding whitespace allowed). Throws ValueError
// "json: <what> at byte <pos>" on any syntax error, duplicate object key or excess nesting.
Value parse(std::string_view text);

// A NUMBER holding a plain non-negative integer (no sign, fraction or exponent) that fits
// in uint64; returns false otherwise.
bool to_uint64(const Value& v, uint64_t* out);

// s as a JSON string literal with quotes, escaping '"', '\\' and control characters.
std::string quote(std::string_view s);

}  // namespace crew::detail::json
