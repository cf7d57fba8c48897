#pragma once
// Index samplers, as paddle.io.SequenceSampler / RandomSampler: each pass (indices())
// yields an order of sample indices.
#include <cstdint>
#include <optional>
#include <vector>

#include "crew/tensor/random.h"

namespace crew::io {

// An order of sample indices, produced afresh for every pass over the data.
class Sampler {
 public:
  virtual ~Sampler() = default;
  // The indices of one pass (one epoch).
  virtual std::vector<int64_t> indices() = 0;
  // Number of indices one pass yields.
  virtual int64_t size() const = 0;
};

// 0, 1, ..., n-1.
class SequenceSampler : public Sampler {
 public:
  explicit SequenceSampler(int64_t num_samples);
  std::vector<int64_t> indices() override;
  int64_t size() const override { return num_samples_; }

 private:
  int64_t num_samples_;
};

// A new random permutation of 0..n-1 every pass. Without a seed the sampler's generator is
// seeded from crew::default_generator() at construction, so crew::seed(s) reproduces it.
class RandomSampler : public Sampler {
 public:
  explicit RandomSampler(int64_t num_samples, std::optional<uint64_t> seed = std::nullopt);
  std::vector<int64_t> indices() override;
  int64_t size() const override { return num_samples_; }

 private:
  int64_t num_samples_;
  Generator gen_;
};

}  // namespace crew::io
