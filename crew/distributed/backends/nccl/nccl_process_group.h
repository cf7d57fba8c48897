#pragma once
// The nccl process group: collectives of GPU tensors through NCCL, for jobs where every rank
// has a GPU of its own (NCCL refuses two ranks on one GPU; those jobs use the staged group,
// staged_process_group.h). NCCL itself lives behind nccl_driver.h, so this file compiles and
// runs without CUDA; only crew's CUDA build installs a real driver.
//
//   auto pg = create_process_group("nccl", store, rank, size, options);  // or init_parallel_env
//   pg->all_reduce(grad_on_gpu, {.op = ReduceOp::AVG})->wait();
//
// Set-up: rank 0 asks NCCL for the unique id and shares it through the group's store; every
// rank starts a non-blocking ncclCommInitRankConfig and polls it, aborting it and throwing
// TimeoutError "nccl init (rank r, group g, gpu:d): ..." when it is not ready within the
// group's timeout. Each collective is one NCCL group on the communicator's stream, after the
// caller's compute stream (which waits for it in turn): wait() blocks the host until the
// device has finished. A watchdog thread completes the Works and, when the oldest collective
// runs past its timeout (or NCCL reports an asynchronous error), aborts the communicator and
// fails it with TimeoutError "<op> (rank r, seq s, group g): nccl collective did not complete
// within <t> ..." and every later one with CommError; the group is unusable after that.
// Host tensors are copied to the rank's GPU and back (waiting at once), so crew's own small
// collectives (flags, scalars) work on an nccl group too.
//
// The group reads device memory itself: it is a DeviceNativeGroup, which create_process_group
// does not wrap in the staged group.
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "crew/distributed/backends/nccl/nccl_driver.h"
#include "crew/distributed/process_group/process_group.h"
#include "crew/distributed/process_group/staged_process_group.h"

namespace crew::dist {

class FutureWork;

class NcclProcessGroup : public ProcessGroup, public DeviceNativeGroup {
 public:
  // Rendezvous through `store` (already the group's own) and init on `device`.
  NcclProcessGroup(const std::shared_ptr<Store>& store, int rank, int size, ProcessGroupOptions options,
                   int device, std::shared_ptr<nccl::Driver> driver);
  ~NcclProcessGroup() override;

  std::string backend_name() const override { return "nccl"; }
  Place place() const { return {driver_->device_type(), device_}; }

  std::shared_ptr<Work> all_reduce(Tensor& tensor, const AllReduceOptions& options = {}) override;
  std::shared_ptr<Work> broadcast(Tensor& tensor, const BroadcastOptions& options = {}) override;
  std::shared_ptr<Work> reduce(Tensor& tensor, const ReduceOptions& options = {}) override;
  std::shared_ptr<Work> all_gather(std::vector<Tensor>& outputs, const Tensor& input,
                                   const AllGatherOptions& options = {}) override;
  std::shared_ptr<Work> gather(std::vector<Tensor>& outputs, const Tensor& input,
                               const GatherOptions& options = {}) override;
  std::shared_ptr<Work> scatter(Tensor& output, const std::vector<Tensor>& inputs,
                                const ScatterOptions& options = {}) override;
  std::shared_ptr<Work> reduce_scatter(Tensor& output, const std::vector<Tensor>& inputs,
                                       const ReduceScatterOptions& options = {}) override;
  std::shared_ptr<Work> alltoall(std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                                 const AllToAllOptions& options = {}) override;
  std::shared_ptr<Work> send(const Tensor& tensor, int dst, const SendOptions& options = {}) override;
  std::shared_ptr<Work> recv(Tensor& tensor, int src, const RecvOptions& options = {}) override;
  std::shared_ptr<Work> barrier(const BarrierOptions& options = {}) override;

 private:
  class Staging;
  struct Pending {
    std::shared_ptr<FutureWork> work;
    std::unique_ptr<nccl::Launched> launched;
    std::chrono::steady_clock::time_point deadline;
    std::vector<Tensor> keep_alive;
  };

  void connect(const std::shared_ptr<Store>& store);
  // Launches `calls` as one collective named `op`; copies staged host tensors back.
  std::shared_ptr<Work> submit(const char* op, std::chrono::milliseconds timeout,
                               const std::vector<nccl::Call>& calls, Staging& staging);
  void watchdog_loop();
  // With mutex_ held: completes what the device finished; false once nothing is pending.
  void complete_ready(std::unique_lock<std::mutex>& lock);
  // With mutex_ held: aborts the communicator and fails every pending op (the first with
  // `first`, the rest with CommError naming it).
  void abort_all(std::unique_lock<std::mutex>& lock, std::exception_ptr first, const std::string& why);

  std::shared_ptr<nccl::Driver> driver_;
  int device_;
  std::unique_ptr<nccl::Communicator> comm_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<Pending> pending_;
  uint64_t next_seq_ = 0;
  std::string broken_;  // why the communicator was aborted ("" while usable)
  bool stop_ = false;
  std::thread watchdog_;
};

// ---- Choosing nccl ----
// The GPU an nccl group of this rank uses: set_device's GPU when the current place is one,
// else ParallelEnv's device_id (FLAGS_selected_gpus) when that GPU exists; -1 otherwise.
int nccl_rank_device(nccl::Driver& driver);
// Publishes `mine` (this rank's GPU identity, "" for none) under "gpu_uuid/<rank>" of `store`
// and returns every rank's, indexed by rank.
std::vector<std::string> exchange_gpu_uuids(Store& store, int rank, int size, const std::string& mine,
                                            std::chrono::milliseconds timeout);
// "" when every rank has a GPU and no two share one; otherwise why NCCL cannot run:
// "rank 1 has no GPU" or "ranks 0 and 1 share GPU GPU-..., which NCCL refuses".
std::string nccl_unusable_reason(const std::vector<std::string>& uuids);
// For init_parallel_env's "auto": true when a driver is installed and every rank's current
// place is a GPU of its own (every rank calls it: it exchanges through `store`).
bool nccl_fits_job(Store& store, int rank, int size, std::chrono::milliseconds timeout);

// Registers backend "nccl" (in every build: without CUDA it says so).
void register_nccl_backend();

}  // namespace crew::dist
