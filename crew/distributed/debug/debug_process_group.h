#pragma once
// DebugProcessGroup: a ProcessGroup that wraps a backend's group to find hangs and desyncs.
// init_parallel_env and new_group give every multi-rank group one (see docs/hang_detection.md).
//
//   auto pg = std::make_shared<DebugProcessGroup>(gloo_pg, group_store, DebugOptions::from_env());
//   pg->all_reduce(t, {.op = ReduceOp::SUM})->wait();
//   // on a collective timeout or failure, e.g.:
//   //   TimeoutError "all_reduce (rank 1, seq 57, group default): timed out after 5 s
//   //   collectives of group default (gathered by rank 1): rank 0 is in broadcast #57 (...); ..."
//
// It records each op (CollectiveTrace). When an op fails with TimeoutError or CommError
// (its own failure, not a caller's wait(timeout) running out), every rank's state is gathered through the
// store within report_timeout and the error carries the report: DesyncError when ranks issued different
// collectives, else the original error type. A watchdog thread answers other ranks' report requests and, when
// a pending op has made no progress for hang_timeout, gathers the report and logs it at ERROR (the op itself
// still fails only at its timeout). With detail, every collective first all-gathers a fingerprint of its op,
// size, dtype and root through the wrapped group and throws DesyncError at once when the ranks disagree.
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "crew/distributed/debug/collective_trace.h"
#include "crew/distributed/process_group/process_group.h"

namespace crew::dist {

class Store;

struct DebugOptions {
  static constexpr std::chrono::milliseconds kDefaultHangTimeout{std::chrono::seconds(300)};
  static constexpr std::chrono::milliseconds kDefaultReportTimeout{std::chrono::seconds(10)};
  static constexpr std::chrono::milliseconds kDefaultPollInterval{200};
  static constexpr size_t kDefaultHistory = debug::CollectiveTrace::kDefaultCapacity;

  // Check before every collective that all ranks agree on it (CREW_DIST_DEBUG=DETAIL).
  bool detail = false;
  // No progress for this long logs every rank's report (CREW_HANG_TIMEOUT; 0 = no watchdog).
  std::chrono::milliseconds hang_timeout = kDefaultHangTimeout;
  // After logging a hang report, end this process with kHangExitCode (CREW_HANG_ACTION=abort;
  // default log): the launcher then stops the group and restarts it (--max_restart), which
  // resumes from the newest checkpoint, instead of the job waiting out CREW_TIMEOUT.
  bool abort_on_hang = false;
  static constexpr int kHangExitCode = 124;  // as timeout(1)
  // How long a report waits for the other ranks' answers (CREW_HANG_REPORT_TIMEOUT).
  std::chrono::milliseconds report_timeout = kDefaultReportTimeout;
  // How often the watchdog looks for stalls and report requests (one store request each).
  std::chrono::milliseconds poll_interval = kDefaultPollInterval;
  // Records kept per group.
  size_t history = kDefaultHistory;

  // CREW_DIST_DEBUG (OFF or DETAIL, default OFF), CREW_HANG_TIMEOUT (default 300 s),
  // CREW_HANG_ACTION (log or abort, default log), CREW_HANG_REPORT_TIMEOUT (default 10 s). ValueError naming
  // the variable otherwise.
  static DebugOptions from_env();
};

namespace debug {
struct DebugState;
}

class DebugProcessGroup final : public ProcessGroup {
 public:
  // `store` is the group's own (namespaced) store, as the backend got it.
  DebugProcessGroup(std::shared_ptr<ProcessGroup> inner, std::shared_ptr<Store> store, DebugOptions options);
  // Stops the watchdog, publishes that this rank left the group, then destroys the wrapped group.
  ~DebugProcessGroup() override;

  std::string backend_name() const override { return inner_->backend_name(); }
  ProcessGroup& inner() const { return *inner_; }
  const DebugOptions& debug_options() const { return debug_options_; }
  // The ops recorded (the last `history`), oldest first.
  std::vector<debug::OpRecord> history() const;
  // The reports the watchdog logged so far.
  std::vector<std::string> hang_reports() const;

  std::shared_ptr<Work> all_reduce(Tensor& tensor, const AllReduceOptions& options) override;
  std::shared_ptr<Work> broadcast(Tensor& tensor, const BroadcastOptions& options) override;
  std::shared_ptr<Work> reduce(Tensor& tensor, const ReduceOptions& options) override;
  std::shared_ptr<Work> all_gather(std::vector<Tensor>& outputs, const Tensor& input,
                                   const AllGatherOptions& options) override;
  std::shared_ptr<Work> gather(std::vector<Tensor>& outputs, const Tensor& input,
                               const GatherOptions& options) override;
  std::shared_ptr<Work> scatter(Tensor& output, const std::vector<Tensor>& inputs,
                                const ScatterOptions& options) override;
  std::shared_ptr<Work> reduce_scatter(Tensor& output, const std::vector<Tensor>& inputs,
                                       const ReduceScatterOptions& options) override;
  std::shared_ptr<Work> alltoall(std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                                 const AllToAllOptions& options) override;
  std::shared_ptr<Work> send(const Tensor& tensor, int dst, const SendOptions& options) override;
  std::shared_ptr<Work> recv(Tensor& tensor, int src, const RecvOptions& options) override;
  std::shared_ptr<Work> barrier(const BarrierOptions& options) override;
  // The wrapped group's (not recorded: it is no collective of the program's own).
  Tensor allocate_buffer(int64_t numel, DType dtype) override {
    return inner_->allocate_buffer(numel, dtype);
  }

 private:
  // Records `record`, runs the DETAIL check, then `issue` (the wrapped group's call).
  std::shared_ptr<Work> run(debug::OpRecord record, const std::function<std::shared_ptr<Work>()>& issue);
  // The DETAIL check of op `id`: DesyncError when the ranks' fingerprints differ.
  void check_agreement(uint64_t id, const debug::OpRecord& record);
  void watchdog();
  [[noreturn]] void abort_for_hang();  // CREW_HANG_ACTION=abort, after the report is logged

  std::shared_ptr<ProcessGroup> inner_;
  DebugOptions debug_options_;
  std::shared_ptr<debug::DebugState> core_;
  mutable std::mutex stop_mutex_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  std::vector<std::string> hang_reports_;  // guarded by stop_mutex_
  std::thread watchdog_;
};

// Whether a collective of this process failed for a lost or stuck peer (a CommError or
// TimeoutError after its report; not a DesyncError, after which the group stays usable). At
// exit the rank that hosts the store then waits only briefly for the others to leave it.
bool collective_failed_in_process();

// Wraps `pg` in a DebugProcessGroup (a group of one rank is returned as it is).
std::shared_ptr<ProcessGroup> wrap_for_debug(std::shared_ptr<ProcessGroup> pg, std::shared_ptr<Store> store,
                                             const DebugOptions& options);

}  // namespace crew::dist
