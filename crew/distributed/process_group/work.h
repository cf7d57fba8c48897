#pragma once
// Work implementations shared by the backends: FutureWork, completed by whichever thread ran
// the op (a worker, or the waiting thread itself), and completed_work(), a handle that is
// done at once (a world of one rank, a non-member).
//
//   auto work = std::make_shared<FutureWork>(OpInfo{"all_reduce", 1, 42, "default"}, timeout);
//   // worker thread:  work->mark_done();  or  work->mark_done(std::current_exception());
//   work->wait(std::chrono::seconds(30));  // rethrows, or TimeoutError
//   //   "all_reduce (rank 1, seq 42, group default): timed out after 30 s"
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "crew/distributed/process_group/process_group.h"

namespace crew::dist {

// Names one collective in error messages.
struct OpInfo {
  std::string op;    // "all_reduce", "broadcast", ...
  int rank = 0;      // rank in the group
  uint64_t seq = 0;  // the group's sequence number of this collective
  std::string group = "default";
  // "all_reduce (rank 1, seq 42, group default)".
  std::string describe() const;
};

// Formats a duration for messages: "30 s", "1500 ms", "30 min".
std::string format_duration(std::chrono::milliseconds d);

// A Work completed from another thread with mark_done().
class FutureWork : public Work {
 public:
  FutureWork(OpInfo info, std::chrono::milliseconds default_timeout);

  using Work::wait;
  // Blocks up to `timeout`; rethrows the op's error; TimeoutError naming the op otherwise.
  void wait(std::chrono::milliseconds timeout) override;
  bool is_completed() override;

  // Marks the op finished, with its error (nullptr = success). Only the first call counts.
  void mark_done(std::exception_ptr error = nullptr);
  const OpInfo& info() const { return info_; }

  // Called by every wait() on an op not yet done, with may_run = whether this wait may run the
  // op on the waiting thread (a wait with at least the default timeout): the runner runs it
  // when nothing runs before it (saves two thread hand-offs) and returns whether it did;
  // otherwise it makes sure the worker will run it.
  void set_inline_runner(std::function<bool(FutureWork*, bool may_run)> run_inline) {
    run_inline_ = std::move(run_inline);
  }

 private:
  OpInfo info_;
  std::mutex mutex_;
  std::condition_variable done_cv_;
  bool done_ = false;
  std::exception_ptr error_;
  std::function<bool(FutureWork*, bool)> run_inline_;
};

// A Work that has already completed successfully.
std::shared_ptr<Work> completed_work(OpInfo info = {});

}  // namespace crew::dist
