#include "crew/distributed/backends/shm/shm_op_queue.h"

#include <algorithm>

#include "crew/core/check.h"
#include "crew/core/error.h"
#include "crew/core/timer.h"
#include "crew/distributed/process_group/work.h"

namespace crew::dist::detail {

ShmWork::ShmWork(ShmOpQueue* queue, std::function<void()> fn, std::string what,
                 std::chrono::milliseconds op_timeout)
    : queue_(queue), fn_(std::move(fn)), what_(std::move(what)), op_timeout_(op_timeout) {}

void ShmWork::run() {
  std::exception_ptr error;
  try {
    fn_();
  } catch (...) {
    error = std::current_exception();
  }
  fn_ = nullptr;  // drop captured tensors as soon as the op is over
  std::vector<Callback> callbacks;
  {
    std::lock_guard<std::mutex> lock(mu_);
    error_ = error;
    done_.store(true, std::memory_order_release);
    callbacks.swap(callbacks_);  // no allocation: both empty unless then() was called
  }
  cv_.notify_all();
  if (!callbacks.empty()) run_callbacks(callbacks, error);
}

bool ShmWork::wait_for_worker(std::chrono::milliseconds limit) {
  // The worker runs it: sleep rather than spin, the worker (or a peer) may need this core.
  if (!awaited_.exchange(true)) queue_->start_now();
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, limit, [&] { return done_.load(std::memory_order_acquire); });
}

void ShmWork::rethrow_error() {
  std::lock_guard<std::mutex> lock(mu_);
  if (error_) std::rethrow_exception(error_);
}

void ShmWork::wait() {
  if (!is_completed()) queue_->run_inline_until(this);
  if (!is_completed() && !wait_for_worker(wait_limit(op_timeout_))) {
    CREW_THROW(TimeoutError, "wait: ", what_, " timed out: did not complete within ",
               format_duration(op_timeout_), " (its own timeout)");
  }
  rethrow_error();
}

void ShmWork::wait(std::chrono::milliseconds timeout) {
  // Never inline: an op running on this thread could not be left after `timeout`.
  if (!is_completed() && !wait_for_worker(timeout)) {
    CREW_THROW(TimeoutError, "wait: ", what_, " did not complete within ", format_duration(timeout));
  }
  rethrow_error();
}

void ShmWork::then(Callback callback) {
  std::exception_ptr error;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!done_.load(std::memory_order_acquire)) {
      callbacks_.push_back(std::move(callback));
      return;
    }
    error = error_;
  }
  std::vector<Callback> now{std::move(callback)};
  run_callbacks(now, error);
}

ShmOpQueue::ShmOpQueue(std::chrono::microseconds start_delay)
    : start_delay_(start_delay), worker_([this] { worker_loop(); }) {}

ShmOpQueue::~ShmOpQueue() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  worker_.join();
}

std::shared_ptr<ShmWork> ShmOpQueue::push(std::function<void()> fn, std::string what,
                                          std::chrono::milliseconds op_timeout, bool async_op) {
  auto work = std::make_shared<ShmWork>(this, std::move(fn), std::move(what), op_timeout);
  {
    std::lock_guard<std::mutex> lock(mu_);
    CREW_CHECK_T(StateError, !stopping_, "shm: ", work->what_,
                 " issued while its process group is being destroyed");
    queue_.push_back(work);
  }
  // A caller that waits at once runs the op inline (or wakes the worker from wait()).
  if (async_op) cv_.notify_one();
  return work;
}

void ShmOpQueue::run_inline_until(ShmWork* work) {
  for (;;) {
    std::shared_ptr<ShmWork> next;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (running_ || queue_.empty()) return;
      auto it = std::find_if(queue_.begin(), queue_.end(), [&](const auto& w) { return w.get() == work; });
      if (it == queue_.end()) return;  // already taken by the worker
      next = queue_.front();
      queue_.pop_front();
      running_ = true;
    }
    next->run();
    bool more;
    {
      std::lock_guard<std::mutex> lock(mu_);
      running_ = false;
      more = !queue_.empty();
    }
    if (more) cv_.notify_all();  // the worker takes over what is left
    if (next.get() == work) return;
  }
}

void ShmOpQueue::start_now() {
  { std::lock_guard<std::mutex> lock(mu_); }  // the worker is between its checks or asleep
  cv_.notify_all();
}

void ShmOpQueue::worker_loop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return !running_ && (stopping_ || !queue_.empty()); });
    if (!running_ && !queue_.empty()) {
      const auto start_at = queue_.front()->issued_ + start_delay_;
      // An op waited for with a short timeout never runs inline; so neither do those before it.
      const bool awaited = std::any_of(queue_.begin(), queue_.end(), [](const auto& w) {
        return w->awaited_.load(std::memory_order_acquire);
      });
      if (!stopping_ && !awaited && Clock::now() < start_at) {
        cv_.wait_until(lock, start_at);  // leave it to a caller that waits right away
        continue;
      }
      auto next = queue_.front();
      queue_.pop_front();
      running_ = true;
      lock.unlock();
      next->run();
      lock.lock();
      running_ = false;
      cv_.notify_all();
      continue;
    }
    return;  // stopping, nothing left
  }
}

}  // namespace crew::dist::detail
