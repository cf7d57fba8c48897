#include "crew/io/loader_run.h"

#include "crew/core/check.h"
#include "crew/io/transforms/transform.h"

namespace crew::io::detail {

LoaderRun::LoaderRun(LoaderRunConfig config) : config_(std::move(config)) {
  CREW_CHECK(config_.num_workers >= 0, "DataLoader: num_workers must be >= 0, got ", config_.num_workers);
  CREW_CHECK(config_.prefetch_factor > 0, "DataLoader: prefetch_factor must be positive, got ", config_.prefetch_factor);
  capacity_ = static_cast<size_t>(config_.prefetch_factor) * static_cast<size_t>(config_.num_workers);
  workers_.reserve(static_cast<size_t>(config_.num_workers));
  try {
    for (int w = 0; w < config_.num_workers; ++w) workers_.emplace_back([this, w] { worker_loop(w); });
  } catch (...) {
    stop_workers();
    throw;
  }
}

LoaderRun::~LoaderRun() { stop_workers(); }

void LoaderRun::stop_workers() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (auto& t : workers_) {
    if (t.joinable()) t.join();
  }
  workers_.clear();
}

LoaderRun::Result LoaderRun::load(size_t k, const std::string& who) const {
  Result result;
  const BatchIndices& indices = config_.batches[k];
  std::vector<Sample> samples;
  samples.reserve(indices.size());
  for (size_t j = 0; j < indices.size(); ++j) {
    const int64_t index = indices[j];
    try {
      // Augmentation randomness depends only on (pass seed, position in the pass).
      SampleSeedScope seed(mix_seed(config_.seed, config_.first_batch + k, j));
      samples.push_back(config_.dataset->get(index));
    } catch (const std::exception& e) {
      result.error = str_cat("DataLoader ", who, ": sample ", index, ": ", e.what());
      return result;
    }
  }
  try {
    result.batch = config_.collate(samples);
  } catch (const std::exception& e) {
    result.error = str_cat("DataLoader ", who, ": collate of batch ", k, " (", indices.size(), " samples from index ",
                           indices.empty() ? -1 : indices[0], "): ", e.what());
  }
  return result;
}

void LoaderRun::worker_loop(int worker_id) {
  const std::string who = str_cat("worker ", worker_id);
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [&] {
      return stop_ || next_dispatch_ >= config_.batches.size() || next_dispatch_ < next_yield_ + capacity_;
    });
    if (stop_ || next_dispatch_ >= config_.batches.size()) return;
    const size_t k = next_dispatch_++;
    lock.unlock();
    Result result = load(k, who);
    lock.lock();
    ready_.emplace(k, std::move(result));
    cv_.notify_all();
  }
}

bool LoaderRun::next(Batch* out) {
  if (next_yield_ >= config_.batches.size()) return false;
  Result result;
  if (workers_.empty()) {
    result = load(next_yield_, "main thread");
  } else {
    std::unique_lock<std::mutex> lock(mu_);
    auto ready = [&] { return ready_.count(next_yield_) > 0; };
    if (config_.timeout.count() > 0) {
      if (!cv_.wait_for(lock, config_.timeout, ready)) {
        CREW_THROW(TimeoutError, "DataLoader: batch ", next_yield_, " of ", config_.batches.size(),
                   " not ready after ", config_.timeout.count(), " ms (num_workers=", config_.num_workers, ")");
      }
    } else {
      cv_.wait(lock, ready);
    }
    auto it = ready_.find(next_yield_);
    result = std::move(it->second);
    ready_.erase(it);
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++next_yield_;
  }
  cv_.notify_all();
  if (!result.error.empty()) {
    stop_workers();
    next_yield_ = config_.batches.size();  // the pass ends with the error
    throw Error(result.error);
  }
  *out = std::move(result.batch);
  return true;
}

}  // namespace crew::io::detail
