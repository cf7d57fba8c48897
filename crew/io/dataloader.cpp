#include "crew/io/dataloader.h"

#include <utility>

#include "crew/core/check.h"
#include "crew/io/loader_run.h"
#include "crew/io/transforms/transform.h"
#include "crew/tensor/device/device.h"
#include "crew/tensor/random.h"

namespace crew::io {

DataLoader::DataLoader(std::shared_ptr<const Dataset> dataset, DataLoaderOptions options)
    : dataset_(std::move(dataset)), options_(std::move(options)) {
  CREW_CHECK(dataset_ != nullptr, "DataLoader: dataset is null");
  CREW_CHECK(options_.batch_size > 0, "DataLoader: batch_size must be positive, got ", options_.batch_size);
  batch_sampler_ = std::make_shared<BatchSampler>(*dataset_, options_.batch_size, options_.shuffle, options_.drop_last);
}

DataLoader::DataLoader(std::shared_ptr<const Dataset> dataset, std::shared_ptr<BatchSamplerBase> batch_sampler,
                       DataLoaderOptions options)
    : dataset_(std::move(dataset)), batch_sampler_(std::move(batch_sampler)), options_(std::move(options)) {
  CREW_CHECK(dataset_ != nullptr, "DataLoader: dataset is null");
  CREW_CHECK(batch_sampler_ != nullptr, "DataLoader: batch_sampler is null");
  // As Paddle: a batch sampler is exclusive with batch_size / shuffle / drop_last.
  CREW_CHECK(options_.batch_size == 1 && !options_.shuffle && !options_.drop_last,
             "DataLoader: batch_size, shuffle and drop_last must keep their defaults when a batch_sampler is given "
             "(got batch_size=", options_.batch_size, ", shuffle=", options_.shuffle, ", drop_last=", options_.drop_last,
             "); set them on the batch sampler");
}

namespace {
// The collate function followed by the copy of every field to options.device, or to pinned
// host memory with pin_memory (where a GPU is present); `collate` itself otherwise.
CollateFn placed_collate(CollateFn collate, const DataLoaderOptions& options) {
  std::optional<Place> place = options.device;
  if (!place && options.pin_memory && cuda_device_count() > 0) place = CUDAPinnedPlace();
  if (!place || place->type == DeviceType::CPU) return collate;
  return [collate = std::move(collate), to = *place](const std::vector<Sample>& samples) {
    Batch batch = collate(samples);
    for (Tensor& t : batch) t = t.to(to);
    return batch;
  };
}
}  // namespace

void DataLoader::resume_at(uint64_t pass, int64_t start_batch) {
  CREW_CHECK(start_batch >= 0, "DataLoader::resume_at: start batch must be >= 0, got ", start_batch);
  passes_ = pass;
  start_batch_ = start_batch;
}

DataLoader::Iterator DataLoader::begin() {
  CREW_CHECK(options_.num_workers >= 0, "DataLoader: num_workers must be >= 0, got ", options_.num_workers);
  detail::LoaderRunConfig config;
  config.dataset = dataset_;
  config.batches = batch_sampler_->batches();
  const int64_t skip = std::exchange(start_batch_, 0);
  CREW_CHECK(skip <= static_cast<int64_t>(config.batches.size()), "DataLoader: resume_at start batch ", skip,
             " is past the end of pass ", passes_, " (", config.batches.size(), " batches)");
  config.batches.erase(config.batches.begin(), config.batches.begin() + skip);
  config.first_batch = static_cast<uint64_t>(skip);
  config.collate = placed_collate(options_.collate_fn ? options_.collate_fn : CollateFn(default_collate), options_);
  config.num_workers = options_.num_workers;
  config.prefetch_factor = options_.prefetch_factor;
  config.timeout = options_.timeout;
  config.seed = options_.seed ? mix_seed(*options_.seed, passes_) : default_generator().next_u64();
  ++passes_;
  return Iterator(std::make_shared<detail::LoaderRun>(std::move(config)));
}

DataLoader::Iterator::Iterator(std::shared_ptr<detail::LoaderRun> run) : run_(std::move(run)) { fetch(); }

DataLoader::Iterator::~Iterator() = default;

void DataLoader::Iterator::fetch() {
  if (!run_) return;
  try {
    if (!run_->next(&batch_)) {
      run_.reset();
      batch_.clear();
    }
  } catch (...) {
    run_.reset();  // joins the workers
    batch_.clear();
    throw;
  }
}

DataLoader::Iterator& DataLoader::Iterator::operator++() {
  fetch();
  return *this;
}

}  // namespace crew::io
