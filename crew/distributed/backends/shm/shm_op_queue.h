#pragma once
// ShmOpQueue: a FIFO of ops run by one worker thread, whose Work::wait() runs the op inline
// when no one has started it yet (internal to the shm backend).
//
// Async use (DataParallel overlapping all_reduce with backward) gets the worker; the common
// "issue, then wait at once" pattern (async_op = false, then wait()) runs on the caller's
// thread and pays no thread handoff,
// which would cost more than a small all_reduce itself (docs/shm.md). The worker leaves a new op
// alone for `start_delay` so that it does not race such a caller for it (a race that, with
// more threads than cores, lets a waiting caller starve the worker), unless a caller waits on
// it with wait(timeout), which never runs inline: then the worker starts it at once.
// Either way ops of one queue run one at a time, in issue order.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "crew/distributed/process_group/process_group.h"

namespace crew::dist::detail {

class ShmOpQueue;

class ShmWork final : public Work {
 public:
  ShmWork(ShmOpQueue* queue, std::function<void()> fn, std::string what,
          std::chrono::milliseconds op_timeout);
  // Runs the op on this thread if nobody has started it, else waits for the worker (up to
  // the op's timeout and a grace). Rethrows the op's error.
  void wait() override;
  // Tells the worker to start the op now (no start delay) and waits up to `timeout`
  // (TimeoutError naming the op). Rethrows the op's error.
  void wait(std::chrono::milliseconds timeout) override;
  bool is_completed() override { return done_.load(std::memory_order_acquire); }
  void then(Callback callback) override;

 private:
  friend class ShmOpQueue;
  void run();  // runs fn_, records its error, signals waiters, runs the callbacks
  // Waits for the worker up to `limit`; false on timeout.
  bool wait_for_worker(std::chrono::milliseconds limit);
  void rethrow_error();
  ShmOpQueue* queue_;
  std::function<void()> fn_;
  std::string what_;  // "all_reduce (rank 0, seq 17, group default)"
  std::chrono::milliseconds op_timeout_;
  std::chrono::steady_clock::time_point issued_ = std::chrono::steady_clock::now();
  std::atomic<bool> done_{false};
  std::atomic<bool> awaited_{false};  // a caller waits for it and will not run it inline
  std::mutex mu_;
  std::condition_variable cv_;
  std::exception_ptr error_;
  std::vector<Callback> callbacks_;  // guarded by mu_; empty unless then() was called
};

class ShmOpQueue {
 public:
  explicit ShmOpQueue(std::chrono::microseconds start_delay);
  // Runs what is queued (each op is bounded by its timeout), then joins the worker. Never
  // destroy a queue in a fork()ed child (its worker and waiters do not exist there).
  ~ShmOpQueue();
  ShmOpQueue(const ShmOpQueue&) = delete;
  ShmOpQueue& operator=(const ShmOpQueue&) = delete;

  // async_op = false: the caller waits at once, so the worker is not woken for it.
  std::shared_ptr<ShmWork> push(std::function<void()> fn, std::string what,
                                std::chrono::milliseconds op_timeout, bool async_op);
  // Runs queued ops on the calling thread up to and including `work`, if nobody runs one.
  void run_inline_until(ShmWork* work);
  // Wakes the worker so that it starts an awaited op (and those before it) without the start delay.
  void start_now();

 private:
  void worker_loop();
  std::chrono::microseconds start_delay_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<ShmWork>> queue_;
  bool running_ = false;
  bool stopping_ = false;
  std::thread worker_;
};

}  // namespace crew::dist::detail
