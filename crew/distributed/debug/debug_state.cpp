#include "crew/distributed/debug/debug_state.h"

#include <atomic>

#include "crew/core/check.h"
#include "crew/core/logging.h"
#include "crew/distributed/debug/debug_process_group.h"
#include "crew/distributed/store/store.h"

namespace crew::dist {

namespace {
std::atomic<bool> g_collective_failed{false};
}  // namespace

bool collective_failed_in_process() { return g_collective_failed.load(); }

namespace debug {

DebugState::DebugState(std::shared_ptr<Store> store_in, int rank_in, int size_in, std::string group_in,
                       std::chrono::milliseconds group_timeout_in,
                       std::chrono::milliseconds report_timeout_in, size_t history)
    : store(std::move(store_in)),
      rank(rank_in),
      size(size_in),
      group(std::move(group_in)),
      group_timeout(group_timeout_in),
      report_timeout(report_timeout_in),
      trace(history) {}

void DebugState::answer_requests() {
  std::lock_guard<std::mutex> lock(responder_mutex_);
  responder_.poll(*store, rank, [this] { return trace.state(rank); });
}

Report DebugState::gather(std::optional<uint64_t> id) {
  RankState mine = trace.state(rank);
  if (id) {
    // The op that failed or stalls is the one this rank waits in, whatever else is pending.
    if (auto record = trace.find(*id)) {
      mine.where = RankState::Where::IN_COLLECTIVE;
      mine.current = record;
    }
  }
  return gather_report(*store, group, rank, size, mine, report_timeout, [this] {
    try {
      answer_requests();
    } catch (const std::exception&) {
      // gather_report notes a failing store itself.
    }
  });
}

void DebugState::fail(uint64_t id, const Error& error) {
  // A DesyncError from the backend was found before any data moved: the group stays usable,
  // so its report is not kept as the group's first failure and its final state is withdrawn
  // when this rank issues its next op (resume()).
  const bool recoverable = dynamic_cast<const DesyncError*>(&error) != nullptr;
  std::string report_text;
  bool mismatch = false;
  {
    std::lock_guard<std::mutex> lock(report_mutex_);
    if (recoverable) {
      const Report report = gather(id);
      report_text = report.text;
      mismatch = report.mismatch;
    } else {
      const bool first = !first_report_;
      if (first) first_report_ = gather(id);
      report_text =
          first ? first_report_->text : str_cat("(report of the first failure) ", first_report_->text);
      mismatch = first_report_->mismatch;
    }
  }
  // Ranks that gather later (this one may exit soon) read where this rank failed.
  RankState final_state = trace.state(rank);
  final_state.where = RankState::Where::FAILED;
  final_state.current = trace.find(id);
  final_state.waiting = std::chrono::milliseconds(0);
  publish_final(*store, final_state);
  if (recoverable) final_to_withdraw_.store(true);
  trace.complete(id, /*failed=*/true);
  forget(id);
  const std::string message = str_cat(error.what(), "\n", report_text);
  if (mismatch || dynamic_cast<const DesyncError*>(&error)) throw DesyncError(message);
  g_collective_failed.store(true);
  if (dynamic_cast<const TimeoutError*>(&error)) throw TimeoutError(message);
  throw CommError(message);
}

void DebugState::resume() {
  if (final_to_withdraw_.exchange(false)) withdraw_final(*store, rank);
}

void DebugState::track(uint64_t id, std::shared_ptr<Work> work) {
  std::lock_guard<std::mutex> lock(works_mutex_);
  pending_works_[id] = std::move(work);
}

void DebugState::forget(uint64_t id) {
  std::lock_guard<std::mutex> lock(works_mutex_);
  pending_works_.erase(id);
}

void DebugState::poll_completions() {
  std::vector<uint64_t> done;
  {
    std::lock_guard<std::mutex> lock(works_mutex_);
    for (const auto& [id, work] : pending_works_) {
      if (work->is_completed()) done.push_back(id);
    }
  }
  // A failed op is marked by its wait (with the report); a completed one nobody waits for is
  // progress either way.
  for (uint64_t id : done) {
    trace.complete(id, /*failed=*/false);
    forget(id);
  }
}

DebugWork::DebugWork(std::shared_ptr<DebugState> core, uint64_t id, std::shared_ptr<Work> inner)
    : core_(std::move(core)), id_(id), inner_(std::move(inner)) {}

template <typename Wait>
void DebugWork::wait_reporting(bool caller_limit, Wait wait_inner) {
  try {
    wait_inner();
  } catch (const TimeoutError& e) {
    // A caller's wait(timeout) running out is not the collective timing out: the op goes on.
    if (caller_limit && !inner_->is_completed()) throw;
    core_->fail(id_, e);
  } catch (const CommError& e) {
    core_->fail(id_, e);
  }
  core_->trace.complete(id_, /*failed=*/false);
  core_->forget(id_);
}

void DebugWork::wait() {
  wait_reporting(false, [&] { inner_->wait(); });
}

void DebugWork::wait(std::chrono::milliseconds timeout) {
  wait_reporting(true, [&] { inner_->wait(timeout); });
}

bool DebugWork::is_completed() { return inner_->is_completed(); }

}  // namespace debug
}  // namespace crew::dist
