#pragma once
// paddle.io.DataLoader: batches of a Dataset, decoded and collated ahead of the training
// loop by worker threads.
//
//   auto train = std::make_shared<crew::io::FashionMNIST>(
//       crew::io::MnistOptions{.mode = "train", .transform = std::make_shared<crew::io::ToTensor>()});
//   crew::io::DataLoader loader(train, {.batch_size = 32, .shuffle = true, .num_workers = 2});
//   for (auto& batch : loader) {    // batch[0]: x [32, 1, 28, 28] float32, batch[1]: y [32] int64
//     ...
//   }
//
// Workers are threads in this process (not processes as in Paddle), so batches are never
// copied between address spaces; use_shared_memory is accepted for compatibility and has
// no effect. At most prefetch_factor * num_workers batches are in flight; the output
// order is the batch sampler's, whatever num_workers is. An exception while loading
// reaches the loop as crew::Error "DataLoader worker <w>: sample <i>: <message>".
// Leaving the loop early (break, exception) stops and joins the workers. With a timeout, a
// batch not ready in time is a TimeoutError on time even while Dataset::get hangs: the stuck
// worker is abandoned (it owns the pass's state and exits when get() returns).
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>

#include "crew/core/place.h"
#include "crew/io/batch_sampler.h"
#include "crew/io/collate.h"
#include "crew/io/dataset.h"

namespace crew::io {

struct DataLoaderOptions {
  // batch_size / shuffle / drop_last build a BatchSampler; with an explicit batch sampler
  // they must keep these defaults (ValueError otherwise, as Paddle's assertion).
  int64_t batch_size = 1;
  bool shuffle = false;
  bool drop_last = false;
  int num_workers = 0;         // 0: load in the calling thread; N: N worker threads
  int prefetch_factor = 2;     // batches in flight per worker
  CollateFn collate_fn;        // null: default_collate (stack every field on a new axis 0)
  bool use_shared_memory = true;  // accepted for Paddle compatibility (workers share memory anyway)
  // > 0: a batch not ready in time throws TimeoutError (with num_workers = 0, one helper
  // thread loads so that the timeout holds); 0: wait as long as it takes.
  std::chrono::milliseconds timeout{0};
  // Base of the per-sample seeds of random transforms; unset: drawn from
  // crew::default_generator() at each pass (so crew::seed(s) reproduces a run).
  std::optional<uint64_t> seed;
  // PyTorch's pin_memory: batches collated into pinned host memory (gpu_pinned), which a GPU
  // copies from directly; ignored (host memory) where no GPU is present, as PyTorch does.
  bool pin_memory = false;
  // Batches copied to this place (e.g. CUDAPlace(0)) by the worker that collated them, so
  // that the next batch's copy runs while the loop computes on the current one.
  std::optional<Place> device;
};

namespace detail {
class LoaderRun;
}

class DataLoader {
 public:
  DataLoader(std::shared_ptr<const Dataset> dataset, DataLoaderOptions options = {});
  // With a batch sampler (a DistributedBatchSampler, ...).
  DataLoader(std::shared_ptr<const Dataset> dataset, std::shared_ptr<BatchSamplerBase> batch_sampler,
             DataLoaderOptions options = {});

  // Input iterator over one pass; owns the pass's worker threads.
  class Iterator {
   public:
    Iterator() = default;
    explicit Iterator(std::shared_ptr<detail::LoaderRun> run);
    Iterator(Iterator&&) noexcept = default;
    Iterator& operator=(Iterator&&) noexcept = default;
    ~Iterator();
    Batch& operator*() { return batch_; }
    Batch* operator->() { return &batch_; }
    Iterator& operator++();
    bool at_end() const { return run_ == nullptr; }

   private:
    void fetch();
    std::shared_ptr<detail::LoaderRun> run_;
    Batch batch_;
  };
  struct Sentinel {};

  // Starts a pass: takes the batch sampler's next epoch and starts the workers.
  Iterator begin();
  // Mid-epoch resume (docs/checkpoints.md): the next pass counts as pass number `pass`
  // (0-based; it picks the per-pass seed when options.seed is set) and skips its first
  // start_batch batches, so it yields exactly the batches start_batch, start_batch + 1, ...
  // (indices and augmentation) of that pass in an uninterrupted run. The batch sampler must
  // be put at the same epoch (DistributedBatchSampler::set_epoch). Later passes are whole.
  void resume_at(uint64_t pass, int64_t start_batch);
  // Passes started so far (the next pass's number).
  uint64_t passes() const { return passes_; }
  Sentinel end() const { return {}; }
  // Number of batches per pass (the batch sampler's size).
  int64_t size() const { return batch_sampler_->size(); }
  const DataLoaderOptions& options() const { return options_; }
  const std::shared_ptr<BatchSamplerBase>& batch_sampler() const { return batch_sampler_; }

 private:
  std::shared_ptr<const Dataset> dataset_;
  std::shared_ptr<BatchSamplerBase> batch_sampler_;
  DataLoaderOptions options_;
  uint64_t passes_ = 0;
  int64_t start_batch_ = 0;  // batches the next pass skips (resume_at)
};

inline bool operator==(const DataLoader::Iterator& it, DataLoader::Sentinel) { return it.at_end(); }
inline bool operator!=(const DataLoader::Iterator& it, DataLoader::Sentinel) { return !it.at_end(); }

}  // namespace crew::io
