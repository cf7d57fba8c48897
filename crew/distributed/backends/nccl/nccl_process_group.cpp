#include "crew/distributed/backends/nccl/nccl_process_group.h"

#include <algorithm>
#include <map>

#include "crew/core/check.h"
#include "crew/core/error.h"
#include "crew/core/parallel_env.h"
#include "crew/core/timer.h"
#include "crew/distributed/backends/backend_unavailable.h"
#include "crew/distributed/process_group/work.h"
#include "crew/distributed/store/store.h"
#include "crew/tensor/device/device.h"

namespace crew::dist {

namespace nccl {
namespace {
std::mutex& driver_mutex() {
  static std::mutex m;
  return m;
}
std::shared_ptr<Driver>& driver_slot() {
  static std::shared_ptr<Driver> d;
  return d;
}
}  // namespace

std::shared_ptr<Driver> driver() {
  std::lock_guard<std::mutex> lock(driver_mutex());
  return driver_slot();
}

std::shared_ptr<Driver> set_driver(std::shared_ptr<Driver> d) {
  std::lock_guard<std::mutex> lock(driver_mutex());
  std::swap(driver_slot(), d);
  return d;
}
}  // namespace nccl

namespace {
constexpr auto kPoll = std::chrono::milliseconds(1);
const std::string kIdKey = "nccl/unique_id";
const std::string kIdFailed = "!";  // prefix of rank 0's "NCCL cannot start here" answer

std::string where(int rank, const ProcessGroupOptions& o, const Place& place) {
  return str_cat("nccl init (rank ", rank, ", group ", o.group_name, ", ", place.to_string(), ")");
}
}  // namespace

// Host tensors of one collective, copied to the group's GPU and back after it completed.
class NcclProcessGroup::Staging {
 public:
  explicit Staging(const NcclProcessGroup& pg, const char* op) : pg_(pg), op_(op) {}

  // The device tensor that stands for `t`; `written`: copied back when the op is done.
  Tensor in(const Tensor& t, bool written) {
    detail::check_tensor(pg_, op_, t, "tensor");
    const Place place = pg_.place();
    if (t.place() == place) {
      keep_.push_back(t);
      return t;
    }
    CREW_CHECK_T(DeviceError, t.place().host_accessible(), op_, " (rank ", pg_.rank(), ", group ",
                 pg_.options().group_name, "): the nccl group runs on ", place.to_string(),
                 ", got a tensor on ", t.place().to_string());
    Tensor d = t.to(place);
    if (written) back_.emplace_back(t, d);
    keep_.push_back(d);
    return d;
  }
  bool staged() const { return !back_.empty() || staged_any_; }
  void mark_staged() { staged_any_ = true; }
  void copy_back() {
    for (auto& [host, dev] : back_) host.copy_(dev);
  }
  std::vector<Tensor>& keep() { return keep_; }

 private:
  const NcclProcessGroup& pg_;
  const char* op_;
  std::vector<std::pair<Tensor, Tensor>> back_;
  std::vector<Tensor> keep_;
  bool staged_any_ = false;
};

NcclProcessGroup::NcclProcessGroup(const std::shared_ptr<Store>& store, int rank, int size,
                                   ProcessGroupOptions options, int device,
                                   std::shared_ptr<nccl::Driver> driver)
    : ProcessGroup(rank, size, std::move(options)), driver_(std::move(driver)), device_(device) {
  CREW_CHECK(driver_ != nullptr, where(rank, options_, {DeviceType::GPU, device}), ": no nccl driver");
  connect(store);
  watchdog_ = std::thread([this] { watchdog_loop(); });
}

NcclProcessGroup::~NcclProcessGroup() {
  {
    std::unique_lock<std::mutex> lock(mutex_);
    // Ops still on the device finish (bounded by their own timeouts) before the communicator goes.
    cv_.wait(lock, [&] { return pending_.empty(); });
    stop_ = true;
  }
  cv_.notify_all();
  if (watchdog_.joinable()) watchdog_.join();
}

void NcclProcessGroup::connect(const std::shared_ptr<Store>& store) {
  const std::string at = where(rank_, options_, place());
  std::string id;
  if (rank_ == 0) {
    try {
      id = driver_->unique_id();
    } catch (const std::exception& e) {
      store->set(kIdKey, kIdFailed + e.what());  // so that the other ranks fail alike, not wait
      throw;
    }
    store->set(kIdKey, id);
  } else {
    store->wait({kIdKey}, options_.timeout);
    id = store->get_string(kIdKey);
    if (id.rfind(kIdFailed, 0) == 0) {
      CREW_THROW(dist::BackendUnavailableError, at,
                 ": rank 0 could not start NCCL: ", id.substr(kIdFailed.size()));
    }
  }
  comm_ = driver_->connect(device_, size_, rank_, id);
  Deadline deadline(options_.timeout);
  std::string why;
  for (;;) {
    const nccl::State state = comm_->poll(&why);
    if (state == nccl::State::READY) return;
    if (state == nccl::State::FAILED) {
      comm_->abort();
      CREW_THROW(CommError, at, ": ", why);
    }
    if (deadline.expired()) {
      comm_->abort();
      CREW_THROW(TimeoutError, at, ": the communicator was not ready within ",
                 format_duration(options_.timeout), "; aborted it (did every rank of the group start?)");
    }
    std::this_thread::sleep_for(kPoll);
  }
}

std::shared_ptr<Work> NcclProcessGroup::submit(const char* op, std::chrono::milliseconds timeout,
                                               const std::vector<nccl::Call>& calls, Staging& staging) {
  const auto limit = op_timeout(timeout);
  std::shared_ptr<FutureWork> work;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    OpInfo info{op, rank_, next_seq_++, options_.group_name};
    if (!broken_.empty())
      CREW_THROW(CommError, info.describe(), ": the nccl communicator was aborted: ", broken_);
    work = std::make_shared<FutureWork>(info, limit);
    std::unique_ptr<nccl::Launched> launched;
    try {
      launched = comm_->launch(calls);
    } catch (const std::exception& e) {
      CREW_THROW(CommError, info.describe(), ": ", e.what());
    }
    pending_.push_back(Pending{work, std::move(launched), std::chrono::steady_clock::now() + limit,
                               std::move(staging.keep())});
  }
  cv_.notify_all();
  if (staging.staged()) {
    work->wait();
    staging.copy_back();
  }
  return work;
}

void NcclProcessGroup::complete_ready(std::unique_lock<std::mutex>& lock) {
  // Ops of one stream finish in order: complete from the front.
  while (!pending_.empty() && pending_.front().launched->ready()) {
    auto work = std::move(pending_.front().work);
    pending_.pop_front();
    lock.unlock();
    work->mark_done();
    lock.lock();
  }
}

void NcclProcessGroup::abort_all(std::unique_lock<std::mutex>& lock, std::exception_ptr first,
                                 const std::string& why) {
  broken_ = why;
  comm_->abort();
  std::deque<Pending> failed;
  failed.swap(pending_);
  lock.unlock();
  bool head = true;
  for (auto& p : failed) {
    if (head && first) {
      p.work->mark_done(first);
    } else {
      p.work->mark_done(std::make_exception_ptr(
          CommError(str_cat(p.work->info().describe(), ": the nccl communicator was aborted: ", why))));
    }
    head = false;
  }
  lock.lock();
}

void NcclProcessGroup::watchdog_loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_) {
    if (pending_.empty()) {
      cv_.notify_all();  // the destructor waits for an empty queue
      cv_.wait(lock, [&] { return stop_ || !pending_.empty(); });
      continue;
    }
    complete_ready(lock);
    if (pending_.empty()) continue;
    std::string why;
    if (comm_->poll(&why) == nccl::State::FAILED) {
      abort_all(lock, nullptr, str_cat("NCCL reported an error on ", place().to_string(), ": ", why));
      continue;
    }
    const Pending& head = pending_.front();
    if (std::chrono::steady_clock::now() >= head.deadline) {
      const OpInfo& info = head.work->info();
      const std::string msg = str_cat(info.describe(), ": nccl collective did not complete within ",
                                      format_duration(head.work->op_timeout()), " on ", place().to_string(),
                                      "; aborted the communicator (a rank may have died, stalled or issued a "
                                      "different collective)");
      abort_all(lock, std::make_exception_ptr(TimeoutError(msg)), str_cat(info.describe(), " timed out"));
      continue;
    }
    cv_.wait_for(lock, kPoll);
  }
}

// ---- collectives ----

std::shared_ptr<Work> NcclProcessGroup::all_reduce(Tensor& tensor, const AllReduceOptions& options) {
  Staging s(*this, "all_reduce");
  Tensor t = s.in(tensor, true);
  return submit("all_reduce", options.timeout,
                {{nccl::Prim::ALL_REDUCE, t.device_data(), t.device_data(), static_cast<size_t>(t.numel()),
                  t.dtype(), options.op}},
                s);
}

std::shared_ptr<Work> NcclProcessGroup::broadcast(Tensor& tensor, const BroadcastOptions& options) {
  detail::check_peer(*this, "broadcast", options.root, "root");
  Staging s(*this, "broadcast");
  Tensor t = s.in(tensor, true);
  return submit("broadcast", options.timeout,
                {{nccl::Prim::BROADCAST, t.device_data(), t.device_data(), static_cast<size_t>(t.numel()),
                  t.dtype(), ReduceOp::SUM, options.root}},
                s);
}

std::shared_ptr<Work> NcclProcessGroup::reduce(Tensor& tensor, const ReduceOptions& options) {
  detail::check_peer(*this, "reduce", options.root, "root");
  Staging s(*this, "reduce");
  Tensor t = s.in(tensor, true);
  return submit("reduce", options.timeout,
                {{nccl::Prim::REDUCE, t.device_data(), t.device_data(), static_cast<size_t>(t.numel()),
                  t.dtype(), options.op, options.root}},
                s);
}

namespace {
nccl::Call p2p(nccl::Prim prim, const Tensor& t, int peer) {
  nccl::Call c{prim};
  if (prim == nccl::Prim::SEND)
    c.send = t.device_data();
  else
    c.recv = t.device_data();
  c.count = static_cast<size_t>(t.numel());
  c.dtype = t.dtype();
  c.peer = peer;
  return c;
}
}  // namespace

std::shared_ptr<Work> NcclProcessGroup::all_gather(std::vector<Tensor>& outputs, const Tensor& input,
                                                   const AllGatherOptions& options) {
  detail::check_tensor(*this, "all_gather", input, "input");
  detail::check_list(*this, "all_gather", outputs, input, "output");
  Staging s(*this, "all_gather");
  Tensor in = s.in(input, false);
  std::vector<nccl::Call> calls;
  for (int r = 0; r < size_; ++r) {  // one broadcast per rank: outputs need not be one buffer
    Tensor out = s.in(outputs[r], true);
    calls.push_back({nccl::Prim::BROADCAST, r == rank_ ? in.device_data() : out.device_data(),
                     out.device_data(), static_cast<size_t>(in.numel()), in.dtype(), ReduceOp::SUM, r});
  }
  return submit("all_gather", options.timeout, calls, s);
}

std::shared_ptr<Work> NcclProcessGroup::gather(std::vector<Tensor>& outputs, const Tensor& input,
                                               const GatherOptions& options) {
  detail::check_peer(*this, "gather", options.root, "root");
  detail::check_tensor(*this, "gather", input, "input");
  Staging s(*this, "gather");
  Tensor in = s.in(input, false);
  std::vector<nccl::Call> calls;
  if (rank_ == options.root) {
    detail::check_list(*this, "gather", outputs, input, "output");
    for (int r = 0; r < size_; ++r) {
      Tensor out = s.in(outputs[r], true);
      if (r == rank_)
        out.copy_(in);
      else
        calls.push_back(p2p(nccl::Prim::RECV, out, r));
    }
  } else {
    calls.push_back(p2p(nccl::Prim::SEND, in, options.root));
  }
  return submit("gather", options.timeout, calls, s);
}

std::shared_ptr<Work> NcclProcessGroup::scatter(Tensor& output, const std::vector<Tensor>& inputs,
                                                const ScatterOptions& options) {
  detail::check_peer(*this, "scatter", options.root, "root");
  Staging s(*this, "scatter");
  Tensor out = s.in(output, true);
  std::vector<nccl::Call> calls;
  if (rank_ == options.root) {
    detail::check_list(*this, "scatter", inputs, output, "input");
    for (int r = 0; r < size_; ++r) {
      Tensor in = s.in(inputs[r], false);
      if (r == rank_)
        out.copy_(in);
      else
        calls.push_back(p2p(nccl::Prim::SEND, in, r));
    }
  } else {
    calls.push_back(p2p(nccl::Prim::RECV, out, options.root));
  }
  return submit("scatter", options.timeout, calls, s);
}

std::shared_ptr<Work> NcclProcessGroup::reduce_scatter(Tensor& output, const std::vector<Tensor>& inputs,
                                                       const ReduceScatterOptions& options) {
  detail::check_tensor(*this, "reduce_scatter", output, "output");
  detail::check_list(*this, "reduce_scatter", inputs, output, "input");
  Staging s(*this, "reduce_scatter");
  Tensor out = s.in(output, true);
  std::vector<nccl::Call> calls;
  for (int r = 0; r < size_; ++r) {  // rank r receives the reduction of inputs[r]
    Tensor in = s.in(inputs[r], false);
    calls.push_back({nccl::Prim::REDUCE, in.device_data(), out.device_data(), static_cast<size_t>(in.numel()),
                     in.dtype(), options.op, r});
  }
  return submit("reduce_scatter", options.timeout, calls, s);
}

std::shared_ptr<Work> NcclProcessGroup::alltoall(std::vector<Tensor>& outputs,
                                                 const std::vector<Tensor>& inputs,
                                                 const AllToAllOptions& options) {
  detail::check_alltoall(*this, outputs, inputs);
  Staging s(*this, "alltoall");
  std::vector<nccl::Call> calls;
  for (int r = 0; r < size_; ++r) {
    Tensor in = s.in(inputs[r], false);
    Tensor out = s.in(outputs[r], true);
    if (r == rank_) {
      out.copy_(in);
    } else {
      calls.push_back(p2p(nccl::Prim::SEND, in, r));
      calls.push_back(p2p(nccl::Prim::RECV, out, r));
    }
  }
  return submit("alltoall", options.timeout, calls, s);
}

std::shared_ptr<Work> NcclProcessGroup::send(const Tensor& tensor, int dst, const SendOptions& options) {
  detail::check_p2p(*this, "send", dst, options.tag, "dst");
  Staging s(*this, "send");
  Tensor t = s.in(tensor, false);
  if (!t.is_same(tensor)) s.mark_staged();  // the host copy must outlive the send: wait at once
  return submit("send", options.timeout, {p2p(nccl::Prim::SEND, t, dst)}, s);
}

std::shared_ptr<Work> NcclProcessGroup::recv(Tensor& tensor, int src, const RecvOptions& options) {
  detail::check_p2p(*this, "recv", src, options.tag, "src");
  Staging s(*this, "recv");
  Tensor t = s.in(tensor, true);
  return submit("recv", options.timeout, {p2p(nccl::Prim::RECV, t, src)}, s);
}

std::shared_ptr<Work> NcclProcessGroup::barrier(const BarrierOptions& options) {
  Staging s(*this, "barrier");
  Tensor one = s.in(Tensor::zeros({1}, DType::FLOAT32, place()), true);
  s.mark_staged();  // a barrier returns when every rank reached it
  return submit(
      "barrier", options.timeout,
      {{nccl::Prim::ALL_REDUCE, one.device_data(), one.device_data(), 1, DType::FLOAT32, ReduceOp::SUM}}, s);
}

// ---- choosing nccl ----

int nccl_rank_device(nccl::Driver& driver) {
  const int count = driver.device_count();
  if (count <= 0) return -1;
  const Place current = current_place();
  if (current.type == driver.device_type()) return current.device;
  const int id = ParallelEnv::from_env().device_id;
  return id >= 0 && id < count ? id : -1;
}

std::vector<std::string> exchange_gpu_uuids(Store& store, int rank, int size, const std::string& mine,
                                            std::chrono::milliseconds timeout) {
  store.set(str_cat("gpu_uuid/", rank), "=" + mine);  // "=": an empty value still marks the key
  std::vector<std::string> keys;
  for (int r = 0; r < size; ++r) keys.push_back(str_cat("gpu_uuid/", r));
  store.wait(keys, timeout);
  std::vector<std::string> uuids;
  for (const auto& key : keys) uuids.push_back(store.get_string(key).substr(1));
  return uuids;
}

std::string nccl_unusable_reason(const std::vector<std::string>& uuids) {
  std::map<std::string, int> first;
  for (int r = 0; r < static_cast<int>(uuids.size()); ++r) {
    if (uuids[r].empty()) return str_cat("rank ", r, " has no GPU");
    auto [it, fresh] = first.emplace(uuids[r], r);
    if (!fresh) {
      return str_cat("ranks ", it->second, " and ", r, " share GPU ", uuids[r],
                     ", which NCCL refuses (backend 'auto' gives ranks sharing a GPU a staged group)");
    }
  }
  return "";
}

bool nccl_fits_job(Store& store, int rank, int size, std::chrono::milliseconds timeout) {
  auto d = nccl::driver();
  if (!d) return false;
  const bool on_gpu = current_place().type == d->device_type() && d->device_count() > 0;
  const std::string mine = on_gpu ? d->device_uuid(current_place().device) : "";
  return nccl_unusable_reason(exchange_gpu_uuids(store, rank, size, mine, timeout)).empty();
}

void register_nccl_backend() {
  register_backend(
      "nccl",
      [](const std::shared_ptr<Store>& store, int rank, int size,
         const ProcessGroupOptions& options) -> std::shared_ptr<ProcessGroup> {
        const std::string at = str_cat("backend nccl (rank ", rank, ", group ", options.group_name, ")");
        auto d = nccl::driver();
        if (!d)
          CREW_THROW(dist::BackendUnavailableError, at,
                     ": crew is not compiled with CUDA (this program has no nccl driver: crew_nccl)");
        const int device = nccl_rank_device(*d);
        const std::string mine = device >= 0 ? d->device_uuid(device) : "";
        const std::string why =
            nccl_unusable_reason(exchange_gpu_uuids(*store, rank, size, mine, options.timeout));
        if (!why.empty()) {
          CREW_THROW(DeviceError, at, ": ", why,
                     device < 0 ? str_cat(" (", d->device_count(), " GPU(s) present here)") : "");
        }
        return std::make_shared<NcclProcessGroup>(store, rank, size, options, device, d);
      });
}

}  // namespace crew::dist
