#include "crew/distributed/process_group/work_queue.h"

#include "crew/core/check.h"
#include "crew/core/error.h"

namespace crew::dist {

WorkQueue::WorkQueue(std::string group_name, int rank, std::chrono::milliseconds timeout)
    : group_name_(std::move(group_name)), rank_(rank), timeout_(timeout) {
  worker_ = std::thread([this] { run(); });
}

WorkQueue::~WorkQueue() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (worker_.joinable()) worker_.join();
}

std::shared_ptr<FutureWork> WorkQueue::submit(const std::string& op, Task task, bool async_op,
                                              std::chrono::milliseconds op_timeout) {
  std::lock_guard<std::mutex> lock(mutex_);
  OpInfo info{op, rank_, next_seq_++, group_name_};
  auto work = std::make_shared<FutureWork>(info, op_timeout.count() > 0 ? op_timeout : timeout_);
  if (stopping_) {
    work->mark_done(std::make_exception_ptr(
        StateError(str_cat(info.describe(), ": the process group has been destroyed"))));
    return work;
  }
  work->set_inline_runner([this](FutureWork* w, bool may_run) { return run_inline(w, may_run); });
  queue_.push_back(Item{work, std::move(task)});
  // A caller that waits at once runs the op inline, or wakes the worker from wait().
  if (async_op) cv_.notify_all();
  return work;
}

uint64_t WorkQueue::submitted() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return next_seq_;
}

void WorkQueue::run() {
  for (;;) {
    Item item;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      cv_.wait(lock, [this] { return stopping_ || (!queue_.empty() && !running_); });
      if (stopping_) {
        // Ops nobody will run: fail them so their waiters return.
        for (auto& pending : queue_) {
          pending.work->mark_done(std::make_exception_ptr(StateError(
              str_cat(pending.work->info().describe(), ": the process group was destroyed before it ran"))));
        }
        queue_.clear();
        return;
      }
      item = std::move(queue_.front());
      queue_.pop_front();
      running_ = true;
    }
    execute(item);
  }
}

bool WorkQueue::run_inline(FutureWork* work, bool may_run) {
  Item item;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    if (!may_run || stopping_ || running_ || queue_.empty() || queue_.front().work.get() != work) {
      lock.unlock();
      cv_.notify_all();  // the worker runs it (it may not have been woken at submit)
      return false;
    }
    item = std::move(queue_.front());
    queue_.pop_front();
    running_ = true;
  }
  execute(item);
  return true;
}

void WorkQueue::execute(Item& item) {
  std::string broken;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    broken = broken_;
  }
  const OpInfo& info = item.work->info();
  std::exception_ptr error;
  std::string failure;
  if (!broken.empty()) {
    error = std::make_exception_ptr(
        CommError(str_cat(info.describe(), ": the group is unusable after an earlier failure: ", broken)));
  } else {
    try {
      item.task(info);
    } catch (const DesyncError&) {
      // The ranks found they disagree before moving any data: they still agree on what comes next.
      error = std::current_exception();
    } catch (const CommError& e) {
      failure = e.what();
      error = std::current_exception();
    } catch (const TimeoutError& e) {
      failure = e.what();
      error = std::current_exception();
    } catch (...) {
      error = std::current_exception();
    }
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!failure.empty() && broken_.empty()) broken_ = failure;
    running_ = false;
  }
  // The next op may start (on the worker or inline) before this one's waiters wake: the
  // ordering rule is about issue order, which is preserved.
  cv_.notify_all();
  item.work->mark_done(error);
}

}  // namespace crew::dist
