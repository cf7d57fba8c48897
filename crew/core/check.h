#pragma once
// Checks that throw typed crew errors with both operands printed.
//
//   CREW_CHECK(n > 0, "batch_size must be positive, got ", n);        // ValueError
//   CREW_CHECK_EQ(a.numel(), b.numel(), "add: element counts differ"); // prints both
//   CREW_CHECK_T(StateError, initialized_, "call init first");
//   CREW_INTERNAL_ASSERT(ptr != nullptr);                              // InternalError (a bug)
#include <sstream>
#include <string>
#include <utility>

#include "crew/core/error.h"

namespace crew::detail {

inline void append_all(std::ostringstream&) {}
template <typename T, typename... Rest>
void append_all(std::ostringstream& os, const T& first, const Rest&... rest) {
  os << first;
  append_all(os, rest...);
}

// Concatenates arguments with operator<<.
template <typename... Args>
std::string str_cat(const Args&... args) {
  std::ostringstream os;
  append_all(os, args...);
  return os.str();
}

template <typename E, typename... Args>
[[noreturn]] void throw_error(const Args&... args) {
  throw E(str_cat(args...));
}

// Throws E with the given message, or "check failed: <cond>" when there is none.
template <typename E, typename... Args>
[[noreturn]] void throw_check(const char* cond_text, const Args&... args) {
  if constexpr (sizeof...(Args) == 0) {
    throw E(str_cat("check failed: ", cond_text));
  } else {
    throw E(str_cat(args...));
  }
}

}  // namespace crew::detail

namespace crew {
using detail::str_cat;
}

#define CREW_THROW(ErrorType, ...) ::crew::detail::throw_error<::crew::ErrorType>(__VA_ARGS__)

#define CREW_CHECK_T(ErrorType, cond, ...)   \
  do {                                       \
    if (!(cond)) {                           \
      ::crew::detail::throw_check<::crew::ErrorType>(#cond __VA_OPT__(, ) __VA_ARGS__); \
    }                                        \
  } while (0)

#define CREW_CHECK(cond, ...) CREW_CHECK_T(ValueError, cond, __VA_ARGS__)

#define CREW_CHECK_OP_(op, a, b, ...)                                                      \
  do {                                                                                     \
    const auto& crew_a_ = (a);                                                             \
    const auto& crew_b_ = (b);                                                             \
    if (!(crew_a_ op crew_b_)) {                                                           \
      CREW_THROW(ValueError, __VA_OPT__(__VA_ARGS__, " ", ) "(expected " #a " " #op " " #b ", got ", \
                 crew_a_, " vs ", crew_b_, ")");                                          \
    }                                                                                      \
  } while (0)

#define CREW_CHECK_EQ(a, b, ...) CREW_CHECK_OP_(==, a, b, __VA_ARGS__)
#define CREW_CHECK_NE(a, b, ...) CREW_CHECK_OP_(!=, a, b, __VA_ARGS__)
#define CREW_CHECK_LT(a, b, ...) CREW_CHECK_OP_(<, a, b, __VA_ARGS__)
#define CREW_CHECK_LE(a, b, ...) CREW_CHECK_OP_(<=, a, b, __VA_ARGS__)
#define CREW_CHECK_GT(a, b, ...) CREW_CHECK_OP_(>, a, b, __VA_ARGS__)
#define CREW_CHECK_GE(a, b, ...) CREW_CHECK_OP_(>=, a, b, __VA_ARGS__)

#define CREW_INTERNAL_ASSERT(cond, ...)                                                    \
  do {                                                                                     \
    if (!(cond)) {                                                                         \
      CREW_THROW(InternalError, "crew internal error at " __FILE__ ":", __LINE__, ": " #cond \
                 " failed. " __VA_OPT__(, ) __VA_ARGS__);                                  \
    }                                                                                      \
  } while (0)
