#pragma once
// WorkQueue: one worker thread per process group running its collectives first in, first
// out. This is what gives crew's ordering rule: ops on a group run in the order they were
// issued, each under the group's next sequence number.
//
//   WorkQueue queue("default", /*rank=*/1, std::chrono::minutes(30));
//   auto work = queue.submit("all_reduce", [&](const OpInfo& info) { ...gloo call... });
//   work->wait();
//
// A wait() (no timeout of the caller's) on an op that nothing runs before runs it on the
// waiting thread instead (the order is unchanged: only the next op, with none running). An op
// submitted with async_op = false does not wake the worker: its wait() runs it, or a
// wait(timeout) wakes the worker.
//
// After an op fails with a communication error or a timeout, the peers are in an unknown
// state, so every later op fails at once with a CommError naming the first failure. A
// DesyncError (the ranks found before moving data that they issued different calls) leaves
// the queue usable.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "crew/distributed/process_group/work.h"

namespace crew::dist {

class WorkQueue {
 public:
  using Task = std::function<void(const OpInfo&)>;

  WorkQueue(std::string group_name, int rank, std::chrono::milliseconds timeout);
  // Lets the running op finish, fails queued ones with StateError, joins the worker.
  ~WorkQueue();
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  // Queues `task` under the next sequence number; the Work completes when it returns/throws.
  // async_op = false: the caller waits at once, so the worker is not woken. op_timeout bounds
  // the op's wait() (kGroupTimeout: the queue's timeout).
  std::shared_ptr<FutureWork> submit(const std::string& op, Task task, bool async_op = true,
                                     std::chrono::milliseconds op_timeout = kGroupTimeout);
  // Ops submitted so far.
  uint64_t submitted() const;

 private:
  struct Item {
    std::shared_ptr<FutureWork> work;
    Task task;
  };
  void run();
  // Runs `work` here if may_run, it is next and nothing is running; true if it did. Otherwise
  // wakes the worker, which an op submitted with async_op = false did not.
  bool run_inline(FutureWork* work, bool may_run);
  // Runs one dequeued item (the caller set running_).
  void execute(Item& item);

  const std::string group_name_;
  const int rank_;
  const std::chrono::milliseconds timeout_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<Item> queue_;
  uint64_t next_seq_ = 0;
  bool stopping_ = false;
  bool running_ = false;  // an op is executing (on the worker or inline)
  std::string broken_;    // the first communication failure, "" while healthy
  std::thread worker_;
};

}  // namespace crew::dist
