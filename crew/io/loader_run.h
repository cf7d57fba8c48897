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

// A pass's state that the worker threads share. Each worker holds it by shared_ptr, so a
// worker stuck in Dataset::get past the timeout can be abandoned (detached): it finds
// `stop` when get() returns and exits, and the state lives until it has.
struct LoaderShared {
  // What a worker is doing, for timeout messages.
  struct Busy {
    size_t batch = 0;
    int64_t sample = -1;  // the index in Dataset::get; -1: collating
    std::chrono::steady_clock::time_point since;
  };
  struct Result {
    Batch batch;
    std::string error;  // non-empty: loading failed
  };

  LoaderRunConfig config;
  size_t capacity = 0;  // batches in flight
  std::mutex mu;
  std::condition_variable cv;
  size_t next_dispatch = 0;
  size_t next_yield = 0;
  bool stop = false;
  int running = 0;  // worker threads that have not returned
  std::map<size_t, Result> ready;
  std::map<int, Busy> busy;  // by worker id, while it loads a batch
};

class LoaderRun {
 public:
  explicit LoaderRun(LoaderRunConfig config);
  // Stops the workers and joins them; a worker still busy after the grace period (the
  // timeout, none after a TimeoutError; unbounded when no timeout is set) is detached.
  ~LoaderRun();
  LoaderRun(const LoaderRun&) = delete;
  LoaderRun& operator=(const LoaderRun&) = delete;

  // The next batch in order into *out; false at the end of the pass. Rethrows a loading
  // error; TimeoutError naming the batch and what its worker is loading when it is not
  // ready within config.timeout (when > 0). With num_workers = 0 and a timeout, one worker
  // thread loads the batches so that a hung Dataset::get cannot hold the caller.
  bool next(Batch* out);

 private:
  // The TimeoutError message for the batch not ready in time (mu held).
  std::string timeout_message() const;
  // How long stopping waits for busy workers: the timeout, or unbounded without one.
  std::chrono::milliseconds grace() const;
  void stop_workers(std::chrono::milliseconds grace);

  std::shared_ptr<LoaderShared> shared_;
  std::vector<std::thread> workers_;
  bool timed_out_ = false;
};

}  // namespace crew::io::detail
