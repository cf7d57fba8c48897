#include "crew/io/distributed_batch_sampler.h"

#include <algorithm>
#include <limits>

#include "crew/core/check.h"
#include "crew/core/parallel_env.h"
#include "crew/io/numpy_random.h"

namespace crew::io {

DistributedBatchSampler::DistributedBatchSampler(int64_t num_samples, int64_t batch_size,
                                                 DistributedBatchSamplerOptions options)
    : dataset_size_(num_samples), batch_size_(batch_size), options_(options) {
  CREW_CHECK(batch_size > 0, "DistributedBatchSampler: batch_size must be a positive integer, got ", batch_size);
  CREW_CHECK(num_samples >= 0, "DistributedBatchSampler: data set size must be >= 0, got ", num_samples);
  if (options.num_replicas < 0 || options.rank < 0) {
    ParallelEnv env = ParallelEnv::from_env();
    num_replicas_ = options.num_replicas < 0 ? env.world_size : options.num_replicas;
    rank_ = options.rank < 0 ? env.rank : options.rank;
  } else {
    num_replicas_ = options.num_replicas;
    rank_ = options.rank;
  }
  CREW_CHECK(num_replicas_ > 0, "DistributedBatchSampler: num_replicas must be a positive integer, got ",
             num_replicas_);
  CREW_CHECK(rank_ >= 0 && rank_ < num_replicas_, "DistributedBatchSampler: rank must be in [0, ",
             num_replicas_, "), got ", rank_);
}

DistributedBatchSampler::DistributedBatchSampler(const Dataset& dataset, int64_t batch_size,
                                                 DistributedBatchSamplerOptions options)
    : DistributedBatchSampler(dataset.size(), batch_size, options) {}

DistributedBatchSampler::DistributedBatchSampler(const Dataset& dataset, int64_t batch_size, int num_replicas,
                                                 int rank, bool shuffle, bool drop_last)
    : DistributedBatchSampler(dataset.size(), batch_size,
                              DistributedBatchSamplerOptions{num_replicas, rank, shuffle, drop_last, true}) {}

int64_t DistributedBatchSampler::total_size() const {
  if (!options_.pad) return dataset_size_;
  int64_t per_rank = (dataset_size_ + num_replicas_ - 1) / num_replicas_;
  return per_rank * num_replicas_;
}

int64_t DistributedBatchSampler::num_samples() const {
  if (options_.pad) return total_size() / num_replicas_;
  // Full interleaved blocks plus this rank's share of the tail (see unpadded_local).
  const int64_t block = batch_size_ * num_replicas_;
  const int64_t full_blocks = dataset_size_ / block;
  const int64_t tail = dataset_size_ % block;
  const int64_t share = tail / num_replicas_ + (rank_ < tail % num_replicas_ ? 1 : 0);
  return full_blocks * batch_size_ + share;
}

int64_t DistributedBatchSampler::size() const { return batch_count(num_samples(), batch_size_, options_.drop_last); }

std::vector<int64_t> DistributedBatchSampler::padded_local(std::vector<int64_t> indices) const {
  const int64_t total = static_cast<int64_t>(indices.size());
  if (num_replicas_ == 1) return indices;
  const int64_t block = batch_size_ * num_replicas_;
  const int64_t last_batch_size = total % block;
  CREW_INTERNAL_ASSERT(last_batch_size % num_replicas_ == 0);
  const int64_t last_local = last_batch_size / num_replicas_;
  std::vector<int64_t> local;
  local.reserve(static_cast<size_t>(num_samples()));
  for (int64_t i = rank_ * batch_size_; i < total - last_batch_size; i += block) {
    local.insert(local.end(), indices.begin() + i, indices.begin() + i + batch_size_);
  }
  const int64_t tail_begin = total - last_batch_size + rank_ * last_local;
  local.insert(local.end(), indices.begin() + tail_begin, indices.begin() + tail_begin + last_local);
  return local;
}

std::vector<int64_t> DistributedBatchSampler::unpadded_local(const std::vector<int64_t>& indices) const {
  // Same block interleaving; the tail (fewer than batch_size * num_replicas samples) is split
  // contiguously, the first tail % num_replicas ranks taking one sample more.
  const int64_t total = static_cast<int64_t>(indices.size());
  const int64_t block = batch_size_ * num_replicas_;
  const int64_t tail = total % block;
  std::vector<int64_t> local;
  local.reserve(static_cast<size_t>(num_samples()));
  for (int64_t i = rank_ * batch_size_; i < total - tail; i += block) {
    local.insert(local.end(), indices.begin() + i, indices.begin() + i + batch_size_);
  }
  const int64_t base = tail / num_replicas_;
  const int64_t extra = tail % num_replicas_;
  const int64_t begin = total - tail + rank_ * base + std::min<int64_t>(rank_, extra);
  const int64_t count = base + (rank_ < extra ? 1 : 0);
  local.insert(local.end(), indices.begin() + begin, indices.begin() + begin + count);
  return local;
}

std::vector<int64_t> DistributedBatchSampler::local_indices(int64_t epoch) const {
  const int64_t total = total_size();
  std::vector<int64_t> indices(static_cast<size_t>(total));
  // Padding appends copies from the front, repeating the list when total > 2 N.
  for (int64_t k = 0; k < total; ++k) indices[static_cast<size_t>(k)] = dataset_size_ ? k % dataset_size_ : 0;
  if (options_.shuffle) {
    CREW_CHECK(epoch >= 0 && epoch <= std::numeric_limits<uint32_t>::max(),
               "DistributedBatchSampler: epoch ", epoch, " is not a valid NumPy seed (0 .. 2**32 - 1)");
    NumpyRandomState(static_cast<uint32_t>(epoch)).shuffle(indices);
  }
  std::vector<int64_t> local = options_.pad ? padded_local(std::move(indices)) : unpadded_local(indices);
  CREW_INTERNAL_ASSERT(static_cast<int64_t>(local.size()) == num_samples(), "rank ", rank_, ": ", local.size(),
                       " local samples, expected ", num_samples());
  return local;
}

std::vector<BatchIndices> DistributedBatchSampler::batches() {
  std::vector<int64_t> local = local_indices(epoch_);
  if (options_.shuffle) ++epoch_;
  return split_batches(local, batch_size_, options_.drop_last);
}

}  // namespace crew::io
