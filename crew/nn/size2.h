#pragma once
// Size2: a (height, width) pair that converts from one integer (both sides) or two,
// for kernel sizes, strides, paddings and dilations: Conv2D(3, 32, 3) or Conv2D(3, 32, {3, 5}).
#include <cstdint>
#include <string>

#include "crew/core/check.h"
#include "crew/nn/functional.h"

namespace crew::nn {

struct Size2 {
  int64_t h = 0;
  int64_t w = 0;
  Size2() = default;
  Size2(int64_t both) : h(both), w(both) {}  // NOLINT(google-explicit-constructor)
  Size2(int64_t height, int64_t width) : h(height), w(width) {}
  functional::Pair pair() const { return {h, w}; }
  std::string str() const { return str_cat("(", h, ", ", w, ")"); }
  bool operator==(const Size2&) const = default;
};

}  // namespace crew::nn
