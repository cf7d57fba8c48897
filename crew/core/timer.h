#pragma once
// Monotonic stopwatch and deadline helpers.
#include <chrono>

namespace crew {

using Clock = std::chrono::steady_clock;

// Measures elapsed wall time since construction or the last reset().
class Stopwatch {
 public:
  Stopwatch() : start_(Clock::now()) {}
  void reset() { start_ = Clock::now(); }
  double seconds() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }
  std::chrono::milliseconds elapsed() const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start_);
  }

 private:
  Clock::time_point start_;
};

// A point in time after which a blocking call gives up.
class Deadline {
 public:
  explicit Deadline(std::chrono::milliseconds timeout) : end_(Clock::now() + timeout) {}
  bool expired() const { return Clock::now() >= end_; }
  std::chrono::milliseconds remaining() const {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end_ - Clock::now());
    return left.count() > 0 ? left : std::chrono::milliseconds(0);
  }
  Clock::time_point time_point() const { return end_; }

 private:
  Clock::time_point end_;
};

}  // namespace crew
