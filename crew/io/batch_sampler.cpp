#include "crew/io/batch_sampler.h"

#include <algorithm>

#include "crew/core/check.h"

namespace crew::io {

std::vector<BatchIndices> split_batches(const std::vector<int64_t>& indices, int64_t batch_size, bool drop_last) {
  CREW_CHECK(batch_size > 0, "split_batches: batch_size must be positive, got ", batch_size);
  std::vector<BatchIndices> out;
  const size_t bs = static_cast<size_t>(batch_size);
  out.reserve(indices.size() / bs + 1);
  for (size_t begin = 0; begin < indices.size(); begin += bs) {
    size_t end = std::min(indices.size(), begin + bs);
    if (end - begin < bs && drop_last) break;
    out.emplace_back(indices.begin() + static_cast<std::ptrdiff_t>(begin),
                     indices.begin() + static_cast<std::ptrdiff_t>(end));
  }
  return out;
}

int64_t batch_count(int64_t num_samples, int64_t batch_size, bool drop_last) {
  return (num_samples + (drop_last ? 0 : batch_size - 1)) / batch_size;
}

BatchSampler::BatchSampler(const Dataset& dataset, int64_t batch_size, bool shuffle, bool drop_last)
    : batch_size_(batch_size), drop_last_(drop_last) {
  CREW_CHECK(batch_size > 0, "BatchSampler: batch_size must be positive, got ", batch_size);
  if (shuffle) {
    sampler_ = std::make_shared<RandomSampler>(dataset.size());
  } else {
    sampler_ = std::make_shared<SequenceSampler>(dataset.size());
  }
}

BatchSampler::BatchSampler(std::shared_ptr<Sampler> sampler, int64_t batch_size, bool drop_last)
    : sampler_(std::move(sampler)), batch_size_(batch_size), drop_last_(drop_last) {
  CREW_CHECK(sampler_ != nullptr, "BatchSampler: sampler is null");
  CREW_CHECK(batch_size > 0, "BatchSampler: batch_size must be positive, got ", batch_size);
}

std::vector<BatchIndices> BatchSampler::batches() {
  return split_batches(sampler_->indices(), batch_size_, drop_last_);
}

int64_t BatchSampler::size() const { return batch_count(sampler_->size(), batch_size_, drop_last_); }

}  // namespace crew::io
