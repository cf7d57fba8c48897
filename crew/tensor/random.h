#pragma once
// Seeded random numbers. crew::seed(n) reseeds the process-wide default generator, which
// parameter initialisers, dropout and shuffling use unless given their own Generator.
//
//   crew::seed(42);
//   Tensor w = crew::uniform({64, 10}, -0.1, 0.1);
#include <cstdint>
#include <mutex>
#include <random>
#include <string>

#include "crew/tensor/tensor.h"

namespace crew {

// A thread-safe, seedable random source (MT19937-64).
class Generator {
 public:
  explicit Generator(uint64_t seed = 5489u) : engine_(seed), seed_(seed) {}
  void manual_seed(uint64_t seed);
  uint64_t initial_seed() const { return seed_; }
  uint64_t next_u64();
  double uniform(double low = 0.0, double high = 1.0);
  double normal(double mean = 0.0, double stddev = 1.0);
  // Fills a float32/float64 tensor in place.
  void fill_uniform(Tensor& t, double low, double high);
  void fill_normal(Tensor& t, double mean, double stddev);
  // Serialised engine state (for checkpoints) and its restore.
  std::string state() const;
  void set_state(const std::string& state);

 private:
  mutable std::mutex mu_;
  std::mt19937_64 engine_;
  uint64_t seed_;
};

// The process-wide default generator.
Generator& default_generator();
// Reseeds the default generator (Paddle's paddle.seed).
void seed(uint64_t value);

Tensor uniform(const Shape& shape, double low, double high, DType dtype = DType::FLOAT32,
               Generator* gen = nullptr);
Tensor normal(const Shape& shape, double mean, double stddev, DType dtype = DType::FLOAT32,
              Generator* gen = nullptr);

}  // namespace crew
