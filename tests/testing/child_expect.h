#pragma once
// Checks for code that runs inside a run_ranks child (tests/testing/multiprocess.h): gtest
// assertions do not cross fork(), so these throw, and run_ranks reports the text as the
// rank's error (expect_all_ok prints it).
//
//   auto results = crew::testing::run_ranks(2, [](int rank, int) {
//     CHILD_EXPECT(rank < 2, "rank ", rank);
//     const std::string msg = crew::testing::expect_throws<crew::ValueError>([] { ... }, {"bad value"});
//   });
#include <stdexcept>
#include <string>
#include <vector>

#include "crew/core/check.h"

// Throws "<cond> failed: <message parts>" when cond is false.
#define CHILD_EXPECT(cond, ...)                                                                           \
  do {                                                                                                    \
    if (!(cond)) throw std::runtime_error(::crew::str_cat(#cond " failed: " __VA_OPT__(, ) __VA_ARGS__)); \
  } while (0)

namespace crew::testing {

// Throws when `text` lacks `needle`, quoting the text.
inline void expect_contains(const std::string& text, const std::string& needle) {
  if (text.find(needle) == std::string::npos) {
    throw std::runtime_error(str_cat("expected the text to contain \"", needle, "\"; it is:\n", text));
  }
}

// The message of the first of Es that fn throws; "" when fn returns. Other exceptions pass.
template <typename E, typename... Es, typename Fn>
std::string error_of(Fn&& fn) {
  try {
    if constexpr (sizeof...(Es) == 0) {
      fn();
      return "";
    } else {
      return error_of<Es...>(fn);
    }
  } catch (const E& e) {
    return e.what();
  }
}

// Runs fn, which must throw E with each of `parts` in its message; returns the message.
template <typename E, typename Fn>
std::string expect_throws(Fn&& fn, const std::vector<std::string>& parts = {}) {
  bool thrown = false;
  std::string msg;
  try {
    fn();
  } catch (const E& e) {
    thrown = true;
    msg = e.what();
  } catch (const std::exception& e) {
    throw std::runtime_error(str_cat("threw the wrong type: ", e.what()));
  }
  if (!thrown) throw std::runtime_error("did not throw");
  for (const auto& part : parts) expect_contains(msg, part);
  return msg;
}

}  // namespace crew::testing
