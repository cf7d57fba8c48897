#pragma once
// paddle.io.DistributedBatchSampler with Paddle's exact semantics (docs/data.md):
// pad the index list to a multiple of num_replicas by appending indices from the front,
// shuffle AFTER padding with np.random.RandomState(epoch) (bit-exact), advance the epoch
// after every pass, hand out whole batches block-interleaved over the ranks, and split the
// tail contiguously. Every rank gets the same number of batches.
//
// crew addition: options.pad = false (for evaluation) uses no padding, so every sample is
// seen exactly once over all ranks; the ranks may then get different numbers of batches.
//
//   crew::io::DistributedBatchSampler sampler(dataset, 32, {.shuffle = true});
//   sampler.set_epoch(epoch);   // optional: passes advance the epoch on their own
#include <cstdint>

#include "crew/io/batch_sampler.h"

namespace crew::io {

struct DistributedBatchSamplerOptions {
  int num_replicas = -1;  // -1: ParallelEnv::from_env().world_size
  int rank = -1;          // -1: ParallelEnv::from_env().rank
  bool shuffle = false;
  bool drop_last = false;
  bool pad = true;        // false: no duplicated samples (ranks may differ in length)
};

class DistributedBatchSampler : public BatchSamplerBase {
 public:
  DistributedBatchSampler(const Dataset& dataset, int64_t batch_size, DistributedBatchSamplerOptions options = {});
  // Paddle's positional form; num_replicas/rank < 0 read the parallel environment.
  DistributedBatchSampler(const Dataset& dataset, int64_t batch_size, int num_replicas, int rank,
                          bool shuffle = false, bool drop_last = false);
  // Over a data set of num_samples samples (no Dataset object needed).
  DistributedBatchSampler(int64_t num_samples, int64_t batch_size, DistributedBatchSamplerOptions options = {});

  std::vector<BatchIndices> batches() override;
  int64_t size() const override;

  // The indices this rank takes in a pass with the given epoch (before batching).
  std::vector<int64_t> local_indices(int64_t epoch) const;
  void set_epoch(int64_t epoch) { epoch_ = epoch; }
  int64_t epoch() const { return epoch_; }
  int num_replicas() const { return num_replicas_; }
  int rank() const { return rank_; }
  // Samples per rank: ceil(N / num_replicas) with padding; this rank's share without.
  int64_t num_samples() const;
  // num_samples() * num_replicas with padding; N without.
  int64_t total_size() const;

 private:
  std::vector<int64_t> padded_local(std::vector<int64_t> indices) const;
  std::vector<int64_t> unpadded_local(const std::vector<int64_t>& indices) const;
  int64_t dataset_size_;
  int64_t batch_size_;
  int num_replicas_;
  int rank_;
  DistributedBatchSamplerOptions options_;
  int64_t epoch_ = 0;
};

}  // namespace crew::io
