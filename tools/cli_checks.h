#pragma once
// Number checks and parsing for the command lines of every crew program (the `crew` command,
// examples/, bench/): a bad value is one line naming the flag, the value and the allowed
// range, and exit status 2.
//
//   app.add_option("--batch-size", o.batch_size, "batch size")->check(crew::cli::at_least(o.batch_size, 1));
//   app.add_option("--lr", o.lr, "learning rate")->check(crew::cli::above(o.lr, 0.0));
//   if (auto rc = crew::cli::parse(app, argc, argv, "train_cnn")) return *rc;
//
//   $ train_cnn --batch-size 0
//   train_cnn: --batch-size: value 0 is out of range: expected an integer >= 1
//
// CLI11's own PositiveNumber / Range print the bounds of a double ("0.000000 to 17976931348623
// 1570...") and a second "Run with --help" line; these name the option's real type instead.
#include <CLI/CLI.hpp>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <type_traits>

namespace crew::cli {

namespace detail {

template <typename T>
std::string to_text(T v) {
  std::ostringstream s;
  if constexpr (std::is_floating_point_v<T>) s.precision(std::numeric_limits<T>::max_digits10 - 2);
  s << +v;  // unary +: an int8_t prints as a number
  return s.str();
}

// "an integer >= 1", "an integer from 2 to 64", "a number > 0", ...
template <typename T>
std::string allowed(T min, T max, bool min_exclusive) {
  const std::string kind = std::is_integral_v<T> ? "an integer" : "a number";
  const bool no_max = max == std::numeric_limits<T>::max();
  if (no_max) return kind + (min_exclusive ? " > " : " >= ") + to_text(min);
  if (min_exclusive) return kind + " > " + to_text(min) + " and <= " + to_text(max);
  return kind + " from " + to_text(min) + " to " + to_text(max);
}

// What --help shows after the type, in CLI11's words: INT:POSITIVE, INT:NONNEGATIVE, INT:[2 - 64].
template <typename T>
std::string help_text(T min, T max, bool min_exclusive) {
  if (min == std::numeric_limits<T>::lowest() && max == std::numeric_limits<T>::max()) return "";
  if (max == std::numeric_limits<T>::max()) {
    if ((min_exclusive && min == 0) || (std::is_integral_v<T> && min == 1)) return "POSITIVE";
    if (!min_exclusive && min == 0) return "NONNEGATIVE";
    return (min_exclusive ? "> " : ">= ") + to_text(min);
  }
  return (min_exclusive ? "(" : "[") + to_text(min) + " - " + to_text(max) + "]";
}

// Parses text as T; false when it is not one (junk, a fraction for an integer, nan, inf, a
// float beyond T's range). An integer beyond T's range parses, to be reported as out of range.
template <typename T>
bool parse_number(const std::string& text, long double* out) {
  if (text.empty()) return false;
  errno = 0;
  char* end = nullptr;
  if constexpr (std::is_integral_v<T>) {
    if (std::is_unsigned_v<T> && text.find('-') != std::string::npos) {
      *out = -1;  // out of range, not junk: "-1" for a count
      return text.find_first_not_of("-0123456789") == std::string::npos;
    }
    const long long v = std::strtoll(text.c_str(), &end, 10);
    if (*end != '\0') return false;
    if (errno == ERANGE) {
      *out = text[0] == '-' ? -HUGE_VALL : HUGE_VALL;
      if (std::is_unsigned_v<T> && text[0] != '-') {  // above LLONG_MAX: maybe still a uint64
        errno = 0;
        const unsigned long long u = std::strtoull(text.c_str(), &end, 10);
        if (errno == 0) *out = static_cast<long double>(u);
      }
      return true;
    }
    *out = static_cast<long double>(v);
    return true;
  } else {
    const long double v = std::strtold(text.c_str(), &end);
    if (*end != '\0' || !std::isfinite(v)) return false;
    if (std::fabs(v) > static_cast<long double>(std::numeric_limits<T>::max())) return false;  // 1e400
    *out = v;
    return true;
  }
}

template <typename T>
CLI::Validator range_validator(T min, T max, bool min_exclusive) {
  const std::string want = allowed(min, max, min_exclusive);
  const std::string kind = std::is_integral_v<T> ? "an integer" : "a number";
  const std::string not_kind = std::is_integral_v<T> ? "an integer" : "a finite number";
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        long double v = 0;
        if (!parse_number<T>(text, &v)) return "value '" + text + "' is not " + not_kind + ": expected " + want;
        const bool low = min_exclusive ? v <= static_cast<long double>(min) : v < static_cast<long double>(min);
        if (low) return "value " + text + " is out of range: expected " + want;
        if (v > static_cast<long double>(max)) {  // past the type's limit: name both bounds
          return "value " + text + " is out of range: expected " + kind + " from " + to_text(min) + " to " +
                 to_text(max);
        }
        return "";
      },
      help_text(min, max, min_exclusive));
}

}  // namespace detail

// The option's value (of variable `var`'s type) lies in [min, max].
template <typename T, typename U, typename V>
CLI::Validator in_range(const T& /*var*/, U min, V max) {
  static_assert(std::is_arithmetic_v<T>, "in_range: a number option");
  return detail::range_validator<T>(static_cast<T>(min), static_cast<T>(max), false);
}

// The option's value is >= min (and representable in var's type).
template <typename T, typename U>
CLI::Validator at_least(const T& var, U min) {
  return in_range(var, min, std::numeric_limits<T>::max());
}

// The option's value is > min (for floating-point options: a positive learning rate).
template <typename T, typename U>
CLI::Validator above(const T& /*var*/, U min) {
  static_assert(std::is_arithmetic_v<T>, "above: a number option");
  if constexpr (std::is_integral_v<T>) {
    return detail::range_validator<T>(static_cast<T>(min + 1), std::numeric_limits<T>::max(),
                                      false);  // ">= 1"
  } else {
    return detail::range_validator<T>(static_cast<T>(min), std::numeric_limits<T>::max(), true);
  }
}

// Any value of var's type (a seed): still one clear line for "abc" or "-1".
template <typename T>
CLI::Validator any_value(const T& var) {
  return in_range(var, std::numeric_limits<T>::lowest(), std::numeric_limits<T>::max());
}

// Parses the command line. nullopt: go on; otherwise the exit status: 0 after --help, 2 after
// a usage error, which is printed as the single line "<program>: <what>".
inline std::optional<int> parse(CLI::App& app, int argc, char** argv, const std::string& program) {
  try {
    app.parse(argc, argv);
    return std::nullopt;
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    std::cerr << program << ": " << e.what() << std::endl;
    return 2;
  }
}

}  // namespace crew::cli
