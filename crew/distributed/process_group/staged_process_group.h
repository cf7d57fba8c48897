#pragma once
// StagedProcessGroup: collectives of tensors that the wrapped group's backend cannot reach.
// Each op copies such tensors to host memory, runs the wrapped group's op on the copies, and
// copies the results back when the op completes; tensors the backend reaches (host memory for
// shm, Gloo and hier) pass straight through, without a copy. Ranks that share one GPU, which
// NCCL refuses, run their collectives this way around shm; the tests run the fake device's.
//
//   auto pg = wrap_for_devices(create_process_group("shm", store, rank, size, options));
//   pg->all_reduce(grad_on_device)->wait();   // device -> host, shm all_reduce, host -> device
//
// create_process_group wraps every group this way once a device backend other than the CPU's
// is registered (crew/tensor/device/device.h); a CPU-only process never has the wrapper.
// The results are copied back on the first of wait(), is_completed() returning true, or the
// op's then() callbacks, so the Work contract (process_group.h) holds as for the wrapped group.
#include <memory>

#include "crew/distributed/process_group/process_group.h"

namespace crew::dist {

// A group whose backend reads device memory itself (nccl): wrap_for_devices leaves it as it is.
class DeviceNativeGroup {
 public:
  virtual ~DeviceNativeGroup() = default;
};

class StagedProcessGroup : public ProcessGroup {
 public:
  explicit StagedProcessGroup(std::shared_ptr<ProcessGroup> inner);

  std::string backend_name() const override { return inner_->backend_name(); }
  const std::shared_ptr<ProcessGroup>& inner() const { return inner_; }

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
  // The wrapped group's memory (host tensors pass straight through).
  Tensor allocate_buffer(int64_t numel, DType dtype) override { return inner_->allocate_buffer(numel, dtype); }

 private:
  std::shared_ptr<ProcessGroup> inner_;
};

// `pg` wrapped in a StagedProcessGroup when a device backend other than the CPU's is
// registered and has a device, else `pg` itself (always for a DeviceNativeGroup).
std::shared_ptr<ProcessGroup> wrap_for_devices(std::shared_ptr<ProcessGroup> pg);

}  // namespace crew::dist
