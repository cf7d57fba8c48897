#include "crew/distributed/process_group/work.h"

#include "crew/core/check.h"
#include "crew/core/error.h"

namespace crew::dist {

std::string OpInfo::describe() const {
  return str_cat(op, " (rank ", rank, ", seq ", seq, ", group ", group, ")");
}

std::string format_duration(std::chrono::milliseconds d) {
  const auto ms = d.count();
  if (ms >= 60000 && ms % 60000 == 0) return str_cat(ms / 60000, " min");
  if (ms >= 1000 && ms % 1000 == 0) return str_cat(ms / 1000, " s");
  return str_cat(ms, " ms");
}

FutureWork::FutureWork(OpInfo info, std::chrono::milliseconds op_timeout)
    : info_(std::move(info)), op_timeout_(op_timeout) {}

bool FutureWork::wait_done(std::chrono::milliseconds limit) {
  std::unique_lock<std::mutex> lock(mutex_);
  return done_cv_.wait_for(lock, limit, [this] { return done_; });
}

void FutureWork::wait() {
  if (run_inline_ && !is_completed()) run_inline_(this, /*may_run=*/true);
  if (!wait_done(wait_limit(op_timeout_))) {
    CREW_THROW(TimeoutError, info_.describe(), ": timed out after ", format_duration(op_timeout_));
  }
  std::lock_guard<std::mutex> lock(mutex_);
  if (error_) std::rethrow_exception(error_);
}

void FutureWork::wait(std::chrono::milliseconds timeout) {
  // Never inline: an op running on this thread could not be left after `timeout`.
  if (run_inline_ && !is_completed()) run_inline_(this, /*may_run=*/false);
  if (!wait_done(timeout)) {
    CREW_THROW(TimeoutError, info_.describe(), ": did not complete within ", format_duration(timeout));
  }
  std::lock_guard<std::mutex> lock(mutex_);
  if (error_) std::rethrow_exception(error_);
}

bool FutureWork::is_completed() {
  std::lock_guard<std::mutex> lock(mutex_);
  return done_;
}

void FutureWork::then(Callback callback) {
  std::exception_ptr error;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!done_) {
      callbacks_.push_back(std::move(callback));
      return;
    }
    error = error_;
  }
  std::vector<Callback> now{std::move(callback)};
  run_callbacks(now, error);
}

void FutureWork::mark_done(std::exception_ptr error) {
  std::vector<Callback> callbacks;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (done_) return;
    done_ = true;
    error_ = error;
    callbacks.swap(callbacks_);
  }
  done_cv_.notify_all();
  run_callbacks(callbacks, error);
}

std::shared_ptr<Work> completed_work(OpInfo info) {
  auto work = std::make_shared<FutureWork>(std::move(info), ProcessGroupOptions::kDefaultTimeout);
  work->mark_done();
  return work;
}

}  // namespace crew::dist
