#pragma once
// Batch samplers, as paddle.io.BatchSampler: each pass (batches()) yields lists of sample
// indices, one list per mini-batch. DataLoader consumes any BatchSamplerBase.
//
//   crew::io::BatchSampler bs(dataset, /*batch_size=*/32, /*shuffle=*/true, /*drop_last=*/false);
//   for (const auto& batch : bs.batches()) { ... }   // batch: indices of up to 32 samples
#include <cstdint>
#include <memory>
#include <vector>

#include "crew/io/dataset.h"
#include "crew/io/sampler.h"

namespace crew::io {

using BatchIndices = std::vector<int64_t>;

// Source of mini-batches of indices.
class BatchSamplerBase {
 public:
  virtual ~BatchSamplerBase() = default;
  // The batches of one pass (one epoch). Samplers with an epoch counter advance it here.
  virtual std::vector<BatchIndices> batches() = 0;
  // Number of batches one pass yields (Paddle's __len__).
  virtual int64_t size() const = 0;
};

// Groups the indices of a Sampler into batches of batch_size; the last, shorter batch is
// kept unless drop_last.
class BatchSampler : public BatchSamplerBase {
 public:
  // Over a data set: a RandomSampler if shuffle, else a SequenceSampler.
  BatchSampler(const Dataset& dataset, int64_t batch_size, bool shuffle = false, bool drop_last = false);
  BatchSampler(std::shared_ptr<Sampler> sampler, int64_t batch_size, bool drop_last = false);

  std::vector<BatchIndices> batches() override;
  int64_t size() const override;
  int64_t batch_size() const { return batch_size_; }
  bool drop_last() const { return drop_last_; }

 private:
  std::shared_ptr<Sampler> sampler_;
  int64_t batch_size_;
  bool drop_last_;
};

// Splits an index list into batches of batch_size (the last one shorter unless drop_last).
std::vector<BatchIndices> split_batches(const std::vector<int64_t>& indices, int64_t batch_size, bool drop_last);
// Paddle's batch count: (n + (drop_last ? 0 : batch_size - 1)) / batch_size.
int64_t batch_count(int64_t num_samples, int64_t batch_size, bool drop_last);

}  // namespace crew::io
