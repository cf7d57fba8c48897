#pragma once
// What a DebugProcessGroup shares with the Works it hands out: the trace, the store, the
// report state, and the failure path that turns a backend error into one carrying the report.
// Works hold it (not the group), so a Work may outlive its group.
#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "crew/core/error.h"
#include "crew/distributed/debug/collective_trace.h"
#include "crew/distributed/debug/desync_report.h"
#include "crew/distributed/process_group/process_group.h"

namespace crew::dist::debug {

struct DebugState {
  DebugState(std::shared_ptr<Store> store, int rank, int size, std::string group,
             std::chrono::milliseconds group_timeout, std::chrono::milliseconds report_timeout,
             size_t history);

  // Gathers every rank's report (once per group: later failures reuse the first one) and
  // throws `error`'s message plus the report: DesyncError on a mismatch, else the same type.
  [[noreturn]] void fail(uint64_t id, const Error& error);
  // Before each op: withdraws the final state a recoverable failure (a backend's DesyncError)
  // published, so later reports read this rank live again.
  void resume();
  // The report now, as this rank sees it, with op `id` as the one it waits in.
  Report gather(std::optional<uint64_t> id);
  // Answers report requests of other ranks (the watchdog, and gatherers while they wait).
  void answer_requests();
  // Marks pending works that completed (the watchdog polls; waits mark their own).
  void track(uint64_t id, std::shared_ptr<Work> work);
  void poll_completions();
  void forget(uint64_t id);

  const std::shared_ptr<Store> store;
  const int rank;
  const int size;
  const std::string group;
  const std::chrono::milliseconds group_timeout;
  const std::chrono::milliseconds report_timeout;
  CollectiveTrace trace;

 private:
  std::mutex responder_mutex_;
  ReportResponder responder_;
  std::mutex works_mutex_;
  std::map<uint64_t, std::shared_ptr<Work>> pending_works_;
  std::mutex report_mutex_;
  std::optional<Report> first_report_;
  std::atomic<bool> final_to_withdraw_{false};
};

// The Work of a DebugProcessGroup op: waits on the wrapped Work and, when the op itself
// fails (not a caller's wait(timeout) running out), fails with the report instead.
class DebugWork final : public Work {
 public:
  DebugWork(std::shared_ptr<DebugState> core, uint64_t id, std::shared_ptr<Work> inner);
  void wait() override;
  void wait(std::chrono::milliseconds timeout) override;
  bool is_completed() override;
  void then(Callback callback) override { inner_->then(std::move(callback)); }

 private:
  // Waits with `wait_inner`; turns the op's own TimeoutError or CommError into the report
  // (with caller_limit, a TimeoutError on an op not yet complete is the caller's: rethrown).
  template <typename Wait>
  void wait_reporting(bool caller_limit, Wait wait_inner);

  std::shared_ptr<DebugState> core_;
  uint64_t id_;
  std::shared_ptr<Work> inner_;
};

}  // namespace crew::dist::debug
