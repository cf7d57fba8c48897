#include "crew/distributed/debug/debug_process_group.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>

#include "crew/core/check.h"
#include "crew/core/env.h"
#include "crew/core/logging.h"
#include "crew/distributed/debug/debug_state.h"
#include "crew/distributed/debug/desync_report.h"
#include "crew/distributed/process_group/work.h"
#include "crew/distributed/store/store.h"

namespace crew::dist {

using debug::OpRecord;

DebugOptions DebugOptions::from_env() {
  DebugOptions o;
  std::string level = env::get_string("CREW_DIST_DEBUG", "OFF");
  std::transform(level.begin(), level.end(), level.begin(), [](unsigned char c) { return std::toupper(c); });
  CREW_CHECK(level == "OFF" || level == "DETAIL", "CREW_DIST_DEBUG: expected OFF or DETAIL, got '", level,
             "'");
  o.detail = level == "DETAIL";
  o.hang_timeout = env::get_duration("CREW_HANG_TIMEOUT", kDefaultHangTimeout);
  std::string action = env::get_string("CREW_HANG_ACTION", "log");
  std::transform(action.begin(), action.end(), action.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  CREW_CHECK(action == "log" || action == "abort", "CREW_HANG_ACTION: expected log or abort, got '", action,
             "'");
  o.abort_on_hang = action == "abort";
  o.report_timeout = env::get_duration("CREW_HANG_REPORT_TIMEOUT", kDefaultReportTimeout);
  CREW_CHECK(o.hang_timeout.count() >= 0, "CREW_HANG_TIMEOUT: must not be negative, got ",
             o.hang_timeout.count(), " ms");
  return o;
}

namespace {

OpRecord record_of(const char* op, const Tensor* t, int root = -1, std::optional<ReduceOp> reduce = {}) {
  OpRecord r;
  r.op = op;
  if (t && t->defined()) {
    r.numel = t->numel();
    r.dtype = t->dtype();
  }
  r.root = root;
  r.reduce_op = reduce ? static_cast<int>(*reduce) : -1;
  return r;
}

}  // namespace

DebugProcessGroup::DebugProcessGroup(std::shared_ptr<ProcessGroup> inner, std::shared_ptr<Store> store,
                                     DebugOptions options)
    : ProcessGroup(inner->rank(), inner->size(), inner->options()),
      inner_(std::move(inner)),
      debug_options_(std::move(options)) {
  CREW_CHECK(store != nullptr, "DebugProcessGroup (rank ", rank_, ", group ", options_.group_name,
             "): needs the group's store");
  core_ = std::make_shared<debug::DebugState>(std::move(store), rank_, size_, options_.group_name,
                                              options_.timeout, debug_options_.report_timeout,
                                              debug_options_.history);
  debug::publish_process(*core_->store, rank_);
  watchdog_ = std::thread([this] { watchdog(); });
}

DebugProcessGroup::~DebugProcessGroup() {
  {
    std::lock_guard<std::mutex> lock(stop_mutex_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  watchdog_.join();
  // Before the wrapped group goes (its peers may fail at once): they then read why.
  debug::publish_final(*core_->store, core_->trace.state(rank_, /*left=*/true));
  inner_.reset();
}

std::vector<OpRecord> DebugProcessGroup::history() const { return core_->trace.history(); }

std::vector<std::string> DebugProcessGroup::hang_reports() const {
  std::lock_guard<std::mutex> lock(stop_mutex_);
  return hang_reports_;
}

void DebugProcessGroup::watchdog() {
  uint64_t reported_stall = UINT64_MAX;
  bool store_warned = false;
  std::unique_lock<std::mutex> lock(stop_mutex_);
  while (!stop_cv_.wait_for(lock, debug_options_.poll_interval, [this] { return stopping_; })) {
    lock.unlock();
    try {
      core_->poll_completions();
      core_->answer_requests();
      const auto stall = core_->trace.stall();
      if (debug_options_.hang_timeout.count() > 0 && stall && stall->id != reported_stall &&
          stall->for_how_long >= debug_options_.hang_timeout) {
        reported_stall = stall->id;
        const auto report = core_->gather(stall->id);
        const std::string text =
            str_cat("no progress for ", format_duration(stall->for_how_long), " (CREW_HANG_TIMEOUT ",
                    format_duration(debug_options_.hang_timeout), "): ", report.text);
        CREW_LOG(ERROR) << "crew::dist watchdog (rank " << rank_ << ", group " << options_.group_name
                        << "): " << text;
        if (debug_options_.abort_on_hang) abort_for_hang();
        std::lock_guard<std::mutex> reports_lock(stop_mutex_);
        hang_reports_.push_back(text);
      }
    } catch (const std::exception& e) {
      if (!store_warned) {
        CREW_LOG(WARNING) << "crew::dist watchdog (rank " << rank_ << ", group " << options_.group_name
                          << "): " << e.what() << " (hang reports may be incomplete)";
      }
      store_warned = true;
    }
    lock.lock();
  }
}

void DebugProcessGroup::abort_for_hang() {
  // The stalled op may be running on the waiting thread, which nothing can interrupt: end the
  // process. Later gatherers read this rank as failed; its peers' ops fail when it is gone.
  auto state = core_->trace.state(rank_, /*left=*/false);
  state.where = debug::RankState::Where::FAILED;
  debug::publish_final(*core_->store, state);
  CREW_LOG(ERROR) << "crew::dist watchdog (rank " << rank_ << ", group " << options_.group_name
                  << "): CREW_HANG_ACTION=abort: exiting with code " << DebugOptions::kHangExitCode;
  std::fflush(stdout);
  std::fflush(stderr);
  std::_Exit(DebugOptions::kHangExitCode);
}

std::shared_ptr<Work> DebugProcessGroup::run(OpRecord record,
                                             const std::function<std::shared_ptr<Work>()>& issue) {
  const bool collective = !record.p2p;
  core_->resume();
  const uint64_t id = core_->trace.begin(record);
  std::shared_ptr<Work> inner_work;
  try {
    if (debug_options_.detail && collective) check_agreement(id, *core_->trace.find(id));
    inner_work = issue();
  } catch (const DesyncError&) {
    throw;
  } catch (...) {
    core_->trace.complete(id, /*failed=*/true);
    throw;
  }
  core_->track(id, inner_work);
  return std::make_shared<debug::DebugWork>(core_, id, std::move(inner_work));
}

void DebugProcessGroup::check_agreement(uint64_t id, const OpRecord& record) {
  constexpr int kElems = OpRecord::kFingerprintElems;
  std::vector<int64_t> mine(kElems);
  record.fingerprint(mine.data());
  Tensor local = Tensor::from_vector<int64_t>(mine);
  std::vector<Tensor> all;
  for (int r = 0; r < size_; ++r) all.push_back(Tensor::empty({kElems}, DType::INT64));
  try {
    inner_->all_gather(all, local, {.async_op = false})->wait();
  } catch (const TimeoutError& e) {
    core_->fail(id, e);
  } catch (const CommError& e) {
    core_->fail(id, e);
  }
  std::vector<std::optional<debug::RankState>> states(size_);
  bool differ = false;
  for (int r = 0; r < size_; ++r) {
    const std::vector<int64_t> theirs = all[r].to_vector<int64_t>();
    differ = differ || theirs != mine;
    debug::RankState s;
    s.rank = r;
    s.where = debug::RankState::Where::IN_COLLECTIVE;
    s.current = OpRecord::from_fingerprint(theirs.data());
    s.collectives_issued = s.current->seq + 1;
    states[r] = s;
  }
  if (!differ) return;
  core_->trace.complete(id, /*failed=*/true);
  debug::Report report = debug::analyze(options_.group_name, rank_, states);
  CREW_THROW(DesyncError, record.op, " (rank ", rank_, ", #", record.seq, ", group ", options_.group_name,
             "): the ranks disagree on this collective (CREW_DIST_DEBUG=DETAIL)\n", report.text,
             report.mismatch ? "" : "\n  desync: the ranks are at different collective numbers");
}

std::shared_ptr<Work> DebugProcessGroup::all_reduce(Tensor& tensor, const AllReduceOptions& options) {
  return run(record_of("all_reduce", &tensor, -1, options.op),
             [&] { return inner_->all_reduce(tensor, options); });
}

std::shared_ptr<Work> DebugProcessGroup::broadcast(Tensor& tensor, const BroadcastOptions& options) {
  return run(record_of("broadcast", &tensor, options.root),
             [&] { return inner_->broadcast(tensor, options); });
}

std::shared_ptr<Work> DebugProcessGroup::reduce(Tensor& tensor, const ReduceOptions& options) {
  return run(record_of("reduce", &tensor, options.root, options.op),
             [&] { return inner_->reduce(tensor, options); });
}

std::shared_ptr<Work> DebugProcessGroup::all_gather(std::vector<Tensor>& outputs, const Tensor& input,
                                                    const AllGatherOptions& options) {
  return run(record_of("all_gather", &input), [&] { return inner_->all_gather(outputs, input, options); });
}

std::shared_ptr<Work> DebugProcessGroup::gather(std::vector<Tensor>& outputs, const Tensor& input,
                                                const GatherOptions& options) {
  return run(record_of("gather", &input, options.root),
             [&] { return inner_->gather(outputs, input, options); });
}

std::shared_ptr<Work> DebugProcessGroup::scatter(Tensor& output, const std::vector<Tensor>& inputs,
                                                 const ScatterOptions& options) {
  return run(record_of("scatter", &output, options.root),
             [&] { return inner_->scatter(output, inputs, options); });
}

std::shared_ptr<Work> DebugProcessGroup::reduce_scatter(Tensor& output, const std::vector<Tensor>& inputs,
                                                        const ReduceScatterOptions& options) {
  return run(record_of("reduce_scatter", &output, -1, options.op),
             [&] { return inner_->reduce_scatter(output, inputs, options); });
}

std::shared_ptr<Work> DebugProcessGroup::alltoall(std::vector<Tensor>& outputs,
                                                  const std::vector<Tensor>& inputs,
                                                  const AllToAllOptions& options) {
  return run(record_of("alltoall", inputs.empty() ? nullptr : &inputs[0]),
             [&] { return inner_->alltoall(outputs, inputs, options); });
}

std::shared_ptr<Work> DebugProcessGroup::send(const Tensor& tensor, int dst, const SendOptions& options) {
  OpRecord r = record_of("send", &tensor, dst);
  r.p2p = true;
  return run(std::move(r), [&] { return inner_->send(tensor, dst, options); });
}

std::shared_ptr<Work> DebugProcessGroup::recv(Tensor& tensor, int src, const RecvOptions& options) {
  OpRecord r = record_of("recv", &tensor, src);
  r.p2p = true;
  return run(std::move(r), [&] { return inner_->recv(tensor, src, options); });
}

std::shared_ptr<Work> DebugProcessGroup::barrier(const BarrierOptions& options) {
  return run(record_of("barrier", nullptr), [&] { return inner_->barrier(options); });
}

std::shared_ptr<ProcessGroup> wrap_for_debug(std::shared_ptr<ProcessGroup> pg, std::shared_ptr<Store> store,
                                             const DebugOptions& options) {
  if (!pg || pg->size() < 2) return pg;
  return std::make_shared<DebugProcessGroup>(std::move(pg), std::move(store), options);
}

}  // namespace crew::dist
