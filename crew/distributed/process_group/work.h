#pragma once
// Work implementations shared by the backends: FutureWork, completed by whichever thread ran
// the op (a worker, or the waiting thread itself), and completed_work(), a handle that is
// done at once (a world of one rank, a non-member).
//
//   auto work = std::make_shared<FutureWork>(OpInfo{"all_reduce", 1, 42, "default"}, timeout);
//   // worker thread:  work->mark_done();  or  work->mark_done(std::current_exception());
//   work->wait(std::chrono::seconds(30));  // rethrows, or TimeoutError
//   //   "all_reduce (rank 1, seq 42, group default): did not complete within 30 s"
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

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

// A Work completed from another thread with mark_done(), keeping the Work contract of
// process_group.h.
class FutureWork : public Work {
 public:
  // `op_timeout` bounds the op itself; wait() allows it that long (plus a grace).
  FutureWork(OpInfo info, std::chrono::milliseconds op_timeout);

  void wait() override;
  // TimeoutError "<op>: did not complete within <timeout>" when the op is not done by then.
  void wait(std::chrono::milliseconds timeout) override;
  bool is_completed() override;
  void then(Callback callback) override;

  // Marks the op finished, with its error (nullptr = success), then runs the callbacks. Only
  // the first call counts.
  void mark_done(std::exception_ptr error = nullptr);
  const OpInfo& info() const { return info_; }
  std::chrono::milliseconds op_timeout() const { return op_timeout_; }

  // Called by every wait on an op not yet done, with may_run = true from wait() (which may
  // run the op on the waiting thread) and false from wait(timeout): the runner runs it when
  // may_run and nothing runs before it (saves two thread hand-offs) and returns whether it
  // did; otherwise it makes sure the worker will run it.
  void set_inline_runner(std::function<bool(FutureWork*, bool may_run)> run_inline) {
    run_inline_ = std::move(run_inline);
  }

 private:
  // Waits up to `limit` for mark_done; false on timeout.
  bool wait_done(std::chrono::milliseconds limit);

  OpInfo info_;
  std::chrono::milliseconds op_timeout_;
  std::mutex mutex_;
  std::condition_variable done_cv_;
  bool done_ = false;
  std::exception_ptr error_;
  std::vector<Callback> callbacks_;
  std::function<bool(FutureWork*, bool)> run_inline_;
};

// A Work that has already completed successfully.
std::shared_ptr<Work> completed_work(OpInfo info = {});

}  // namespace crew::dist
