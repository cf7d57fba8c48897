#include "crew/distributed/process_group/staged_process_group.h"

#include <mutex>
#include <utility>

#include "crew/tensor/device/device.h"

namespace crew::dist {
namespace {

// The host copies of one op's tensors and where their results go back to.
class Staging {
 public:
  // The tensor the wrapped group works on: `t` itself in host memory, else a host copy (of
  // its contents when the op reads them).
  Tensor in(const Tensor& t, bool read) {
    if (!t.defined() || t.place().host_accessible()) return t;
    return read ? t.cpu() : Tensor::uninitialized(t.shape(), t.dtype());
  }
  // As in(), and the op writes the result into it: copied back to `t` when the op completes.
  Tensor out(const Tensor& t, bool read) {
    Tensor host = in(t, read);
    if (!host.is_same(t)) back_.emplace_back(t, host);
    return host;
  }
  std::vector<Tensor> in(const std::vector<Tensor>& ts, bool read) {
    std::vector<Tensor> host;
    for (const Tensor& t : ts) host.push_back(in(t, read));
    return host;
  }
  std::vector<Tensor> out(const std::vector<Tensor>& ts, bool read) {
    std::vector<Tensor> host;
    for (const Tensor& t : ts) host.push_back(out(t, read));
    return host;
  }
  bool copies_back() const { return !back_.empty(); }
  void copy_back() {
    for (auto& [device, host] : back_) device.copy_(host);
    back_.clear();
  }

 private:
  std::vector<std::pair<Tensor, Tensor>> back_;
};

// The wrapped op's Work, copying the results back once the op completed.
class StagedWork : public Work, public std::enable_shared_from_this<StagedWork> {
 public:
  StagedWork(std::shared_ptr<Work> inner, Staging staging, std::vector<Tensor> keep_alive)
      : inner_(std::move(inner)), staging_(std::move(staging)), keep_alive_(std::move(keep_alive)) {}

  void wait() override {
    inner_->wait();
    copy_back();
  }
  void wait(std::chrono::milliseconds timeout) override {
    inner_->wait(timeout);
    copy_back();
  }
  bool is_completed() override {
    if (!inner_->is_completed()) return false;
    try {
      inner_->wait(std::chrono::milliseconds(0));  // rethrows the op's error: nothing to copy
      copy_back();
    } catch (...) {
      // wait() rethrows it to the caller.
    }
    return true;
  }
  void then(Callback callback) override {
    std::weak_ptr<StagedWork> self = weak_from_this();
    inner_->then([self, callback = std::move(callback)](std::exception_ptr error) {
      if (auto work = self.lock(); work && !error) {
        try {
          work->copy_back();
        } catch (...) {
          error = std::current_exception();
        }
      }
      callback(error);
    });
  }

 private:
  // After the op succeeded: the results to their device tensors, once.
  void copy_back() {
    std::lock_guard<std::mutex> lock(mu_);
    staging_.copy_back();
  }

  std::shared_ptr<Work> inner_;
  std::mutex mu_;
  Staging staging_;
  std::vector<Tensor> keep_alive_;  // host inputs the op reads until it completes
};

std::shared_ptr<Work> staged(std::shared_ptr<Work> inner, Staging staging, std::vector<Tensor> keep_alive = {}) {
  if (!staging.copies_back() && keep_alive.empty()) return inner;
  return std::make_shared<StagedWork>(std::move(inner), std::move(staging), std::move(keep_alive));
}

}  // namespace

StagedProcessGroup::StagedProcessGroup(std::shared_ptr<ProcessGroup> inner)
    : ProcessGroup(inner->rank(), inner->size(), inner->options()), inner_(std::move(inner)) {}

std::shared_ptr<Work> StagedProcessGroup::all_reduce(Tensor& tensor, const AllReduceOptions& options) {
  Staging s;
  Tensor host = s.out(tensor, true);
  return staged(inner_->all_reduce(host, options), std::move(s));
}

std::shared_ptr<Work> StagedProcessGroup::broadcast(Tensor& tensor, const BroadcastOptions& options) {
  Staging s;
  Tensor host = s.out(tensor, true);
  return staged(inner_->broadcast(host, options), std::move(s));
}

std::shared_ptr<Work> StagedProcessGroup::reduce(Tensor& tensor, const ReduceOptions& options) {
  Staging s;
  Tensor host = s.out(tensor, true);
  return staged(inner_->reduce(host, options), std::move(s));
}

std::shared_ptr<Work> StagedProcessGroup::all_gather(std::vector<Tensor>& outputs, const Tensor& input,
                                                     const AllGatherOptions& options) {
  Staging s;
  std::vector<Tensor> host_out = s.out(outputs, false);
  Tensor host_in = s.in(input, true);
  return staged(inner_->all_gather(host_out, host_in, options), std::move(s), {host_in});
}

std::shared_ptr<Work> StagedProcessGroup::gather(std::vector<Tensor>& outputs, const Tensor& input,
                                                 const GatherOptions& options) {
  Staging s;
  std::vector<Tensor> host_out = s.out(outputs, false);
  Tensor host_in = s.in(input, true);
  return staged(inner_->gather(host_out, host_in, options), std::move(s), {host_in});
}

std::shared_ptr<Work> StagedProcessGroup::scatter(Tensor& output, const std::vector<Tensor>& inputs,
                                                  const ScatterOptions& options) {
  Staging s;
  Tensor host_out = s.out(output, false);
  std::vector<Tensor> host_in = s.in(inputs, true);
  return staged(inner_->scatter(host_out, host_in, options), std::move(s), host_in);
}

std::shared_ptr<Work> StagedProcessGroup::reduce_scatter(Tensor& output, const std::vector<Tensor>& inputs,
                                                         const ReduceScatterOptions& options) {
  Staging s;
  Tensor host_out = s.out(output, false);
  std::vector<Tensor> host_in = s.in(inputs, true);
  return staged(inner_->reduce_scatter(host_out, host_in, options), std::move(s), host_in);
}

std::shared_ptr<Work> StagedProcessGroup::alltoall(std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                                                   const AllToAllOptions& options) {
  Staging s;
  std::vector<Tensor> host_out = s.out(outputs, false);
  std::vector<Tensor> host_in = s.in(inputs, true);
  return staged(inner_->alltoall(host_out, host_in, options), std::move(s), host_in);
}

std::shared_ptr<Work> StagedProcessGroup::send(const Tensor& tensor, int dst, const SendOptions& options) {
  Staging s;
  Tensor host = s.in(tensor, true);
  return staged(inner_->send(host, dst, options), std::move(s), {host});
}

std::shared_ptr<Work> StagedProcessGroup::recv(Tensor& tensor, int src, const RecvOptions& options) {
  Staging s;
  Tensor host = s.out(tensor, false);
  return staged(inner_->recv(host, src, options), std::move(s));
}

std::shared_ptr<Work> StagedProcessGroup::barrier(const BarrierOptions& options) { return inner_->barrier(options); }

std::shared_ptr<ProcessGroup> wrap_for_devices(std::shared_ptr<ProcessGroup> pg) {
  if (dynamic_cast<const DeviceNativeGroup*>(pg.get())) return pg;
  for (int type = 0; type < kNumDeviceTypes; ++type) {
    const auto t = static_cast<DeviceType>(type);
    // A backend compiled in but with no device here (a CUDA build on a CPU machine) has no
    // tensors to stage: CPU jobs keep the group unwrapped.
    if (t == DeviceType::CPU || !has_device_backend(t)) continue;
    if (device_backend(Place{t, 0}, "wrap_for_devices").device_count() > 0) {
      return std::make_shared<StagedProcessGroup>(std::move(pg));
    }
  }
  return pg;
}

}  // namespace crew::dist
