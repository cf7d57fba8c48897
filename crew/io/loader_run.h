#pragma once
// One pass of a DataLoader: the batch list, the worker threads and the reorder buffer.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "crew/io/batch_sampler.h"
#include "crew/io/collate.h"
#include "crew/io/dataset.h"

namespace crew::io::detail {

struct LoaderRunConfig {
  std::shared_ptr<const Dataset> dataset;
  std::vector<BatchIndices> batches;
  CollateFn collate;
  int num_workers = 0;
  int prefetch_factor = 2;
  std::chrono::milliseconds timeout{0};
  uint64_t seed = 0;  // per-pass base of the per-sample seeds
  uint64_t first_batch = 0;  // position in the pass of batches[0] (resume skips the ones before)
};

class LoaderRun {
 public:
  explicit LoaderRun(LoaderRunConfig config);
  ~LoaderRun();  // stops and joins the workers
  LoaderRun(const LoaderRun&) = delete;
  LoaderRun& operator=(const LoaderRun&) = delete;

  // The next batch in order into *out; false at the end of the pass. Rethrows a loading
  // error; TimeoutError after config.timeout (when > 0).
  bool next(Batch* out);

 private:
  struct Result {
    Batch batch;
    std::string error;  // non-empty: loading failed
  };
  // Loads batch k; `who` names the thread in error messages.
  Result load(size_t k, const std::string& who) const;
  void worker_loop(int worker_id);
  void stop_workers();

  LoaderRunConfig config_;
  size_t capacity_;  // batches in flight
  std::mutex mu_;
  std::condition_variable cv_;
  size_t next_dispatch_ = 0;
  size_t next_yield_ = 0;
  bool stop_ = false;
  std::map<size_t, Result> ready_;
  std::vector<std::thread> workers_;
};

}  // namespace crew::io::detail
