#include "crew/io/loader_run.h"

#include "crew/core/check.h"
#include "crew/io/transforms/transform.h"

namespace crew::io::detail {
namespace {

using Result = LoaderShared::Result;

// Records what worker `worker_id` (>= 0) is loading, for a timeout message.
void mark_busy(LoaderShared& s, int worker_id, size_t k, int64_t sample) {
  if (worker_id < 0) return;
  std::lock_guard<std::mutex> lock(s.mu);
  s.busy[worker_id] = {k, sample, std::chrono::steady_clock::now()};
}

// Loads batch k; `who` names the thread in error messages. Touches only `s`, never the
// LoaderRun, so an abandoned worker may still be in here after the run is gone.
Result load(LoaderShared& s, size_t k, const std::string& who, int worker_id) {
  Result result;
  const LoaderRunConfig& config = s.config;
  const BatchIndices& indices = config.batches[k];
  std::vector<Sample> samples;
  samples.reserve(indices.size());
  for (size_t j = 0; j < indices.size(); ++j) {
    const int64_t index = indices[j];
    mark_busy(s, worker_id, k, index);
    try {
      // Augmentation randomness depends only on (pass seed, position in the pass).
      SampleSeedScope seed(mix_seed(config.seed, config.first_batch + k, j));
      samples.push_back(config.dataset->get(index));
    } catch (const std::exception& e) {
      result.error = str_cat("DataLoader ", who, ": sample ", index, ": ", e.what());
      return result;
    }
  }
  mark_busy(s, worker_id, k, -1);
  try {
    result.batch = config.collate(samples);
  } catch (const std::exception& e) {
    result.error = str_cat("DataLoader ", who, ": collate of batch ", k, " (", indices.size(), " samples from index ",
                           indices.empty() ? -1 : indices[0], "): ", e.what());
  }
  return result;
}

void worker_loop(std::shared_ptr<LoaderShared> shared, int worker_id) {
  LoaderShared& s = *shared;
  const std::string who = str_cat("worker ", worker_id);
  std::unique_lock<std::mutex> lock(s.mu);
  while (true) {
    s.cv.wait(lock, [&] {
      return s.stop || s.next_dispatch >= s.config.batches.size() ||
             s.next_dispatch < s.next_yield + s.capacity;
    });
    if (s.stop || s.next_dispatch >= s.config.batches.size()) break;
    const size_t k = s.next_dispatch++;
    lock.unlock();
    Result result = load(s, k, who, worker_id);
    lock.lock();
    s.busy.erase(worker_id);
    s.ready.emplace(k, std::move(result));
    s.cv.notify_all();
  }
  --s.running;
  s.cv.notify_all();
}

}  // namespace

LoaderRun::LoaderRun(LoaderRunConfig config) : shared_(std::make_shared<LoaderShared>()) {
  LoaderShared& s = *shared_;
  s.config = std::move(config);
  CREW_CHECK(s.config.num_workers >= 0, "DataLoader: num_workers must be >= 0, got ", s.config.num_workers);
  CREW_CHECK(s.config.prefetch_factor > 0, "DataLoader: prefetch_factor must be positive, got ",
             s.config.prefetch_factor);
  CREW_CHECK(s.config.timeout.count() >= 0, "DataLoader: timeout must be >= 0, got ",
             s.config.timeout.count(), " ms");
  // A timeout needs a thread other than the caller's to run Dataset::get.
  const int threads = s.config.num_workers == 0 && s.config.timeout.count() > 0 ? 1 : s.config.num_workers;
  s.capacity = static_cast<size_t>(s.config.prefetch_factor) * static_cast<size_t>(threads);
  workers_.reserve(static_cast<size_t>(threads));
  try {
    for (int w = 0; w < threads; ++w) {
      {
        std::lock_guard<std::mutex> lock(s.mu);
        ++s.running;
      }
      try {
        workers_.emplace_back(worker_loop, shared_, w);
      } catch (...) {
        std::lock_guard<std::mutex> lock(s.mu);
        --s.running;
        throw;
      }
    }
  } catch (...) {
    stop_workers(std::chrono::milliseconds::max());
    throw;
  }
}

LoaderRun::~LoaderRun() { stop_workers(timed_out_ ? std::chrono::milliseconds(0) : grace()); }

std::chrono::milliseconds LoaderRun::grace() const {
  const auto timeout = shared_->config.timeout;
  return timeout.count() > 0 ? timeout : std::chrono::milliseconds::max();
}

void LoaderRun::stop_workers(std::chrono::milliseconds grace) {
  LoaderShared& s = *shared_;
  bool all_returned = false;
  {
    std::unique_lock<std::mutex> lock(s.mu);
    s.stop = true;
    s.cv.notify_all();
    auto returned = [&] { return s.running == 0; };
    if (grace == std::chrono::milliseconds::max()) {
      s.cv.wait(lock, returned);
      all_returned = true;
    } else {
      all_returned = s.cv.wait_for(lock, grace, returned);
    }
  }
  for (auto& t : workers_) {
    if (!t.joinable()) continue;
    // A worker stuck in Dataset::get cannot be interrupted: it keeps `shared_` alive and
    // exits when get() returns.
    if (all_returned) {
      t.join();
    } else {
      t.detach();
    }
  }
  workers_.clear();
}

std::string LoaderRun::timeout_message() const {
  const LoaderShared& s = *shared_;
  std::string what = "not yet started by a worker";
  const auto now = std::chrono::steady_clock::now();
  for (const auto& [worker, b] : s.busy) {
    if (b.batch != s.next_yield) continue;
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now - b.since).count();
    what = b.sample >= 0
               ? str_cat("worker ", worker, " has been in Dataset::get(", b.sample, ") for ", ms, " ms")
               : str_cat("worker ", worker, " has been collating it for ", ms, " ms");
  }
  return str_cat("DataLoader: batch ", s.config.first_batch + s.next_yield,
                 " of the pass not ready within the ", s.config.timeout.count(), " ms timeout: ", what,
                 " (num_workers=", s.config.num_workers, "); the worker is abandoned and the pass ends");
}

bool LoaderRun::next(Batch* out) {
  LoaderShared& s = *shared_;
  if (s.next_yield >= s.config.batches.size()) return false;
  Result result;
  if (workers_.empty()) {
    result = load(s, s.next_yield, "main thread", -1);
  } else {
    std::unique_lock<std::mutex> lock(s.mu);
    auto ready = [&] { return s.ready.count(s.next_yield) > 0; };
    if (s.config.timeout.count() > 0) {
      if (!s.cv.wait_for(lock, s.config.timeout, ready)) {
        const std::string message = timeout_message();
        s.next_yield = s.config.batches.size();  // the pass ends with the error
        lock.unlock();
        timed_out_ = true;
        stop_workers(std::chrono::milliseconds(0));
        throw TimeoutError(message);
      }
    } else {
      s.cv.wait(lock, ready);
    }
    auto it = s.ready.find(s.next_yield);
    result = std::move(it->second);
    s.ready.erase(it);
  }
  {
    std::lock_guard<std::mutex> lock(s.mu);
    ++s.next_yield;
  }
  s.cv.notify_all();
  if (!result.error.empty()) {
    {
      std::lock_guard<std::mutex> lock(s.mu);
      s.next_yield = s.config.batches.size();  // the pass ends with the error
    }
    stop_workers(grace());
    throw Error(result.error);
  }
  *out = std::move(result.batch);
  return true;
}

}  // namespace crew::io::detail
