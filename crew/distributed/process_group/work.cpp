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

FutureWork::FutureWork(OpInfo info, std::chrono::milliseconds default_timeout) : info_(std::move(info)) {
  default_timeout_ = default_timeout;
}

void FutureWork::wait(std::chrono::milliseconds timeout) {
  // Only a wait as long as the op's own timeout may run it inline: the op may block that long.
  if (run_inline_ && !is_completed()) run_inline_(this, timeout >= default_timeout_);
  std::unique_lock<std::mutex> lock(mutex_);
  if (!done_cv_.wait_for(lock, wait_limit(timeout), [this] { return done_; })) {
    CREW_THROW(TimeoutError, info_.describe(), ": timed out after ", format_duration(timeout));
  }
  if (error_) std::rethrow_exception(error_);
}

bool FutureWork::is_completed() {
  std::lock_guard<std::mutex> lock(mutex_);
  return done_;
}

void FutureWork::mark_done(std::exception_ptr error) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (done_) return;
    done_ = true;
    error_ = std::move(error);
  }
  done_cv_.notify_all();
}

std::shared_ptr<Work> completed_work(OpInfo info) {
  auto work = std::make_shared<FutureWork>(std::move(info), ProcessGroupOptions::kDefaultTimeout);
  work->mark_done();
  return work;
}

}  // namespace crew::dist
