#include "crew/distributed/backends/shm/shm_process_group.h"

#include <unistd.h>

#include <atomic>

#include "crew/core/check.h"
#include "crew/distributed/backends/shm/shm_comm.h"
#include "crew/distributed/backends/shm/shm_op_queue.h"

namespace crew::dist {
namespace {

using detail::ShmOp;
using detail::ShmOpKind;

class ShmProcessGroup final : public ProcessGroup {
 public:
  ShmProcessGroup(Store& store, int rank, int size, ProcessGroupOptions options, const ShmOptions& shm)
      : ProcessGroup(rank, size, std::move(options)),
        shared_buffers_(shm.shared_buffers),
        comm_(store, rank, size, options_, shm),
        collectives_(std::make_unique<detail::ShmOpQueue>(shm.worker_start_delay)),
        sends_(std::make_unique<detail::ShmOpQueue>(shm.worker_start_delay)),
        recvs_(std::make_unique<detail::ShmOpQueue>(shm.worker_start_delay)) {}

  ~ShmProcessGroup() override {
    if (::getpid() != owner_pid_) {
      // A fork()ed child (a data worker, ...): the worker threads and their condition
      // variables belong to the parent; leave them alone.
      (void)collectives_.release();
      (void)sends_.release();
      (void)recvs_.release();
    }
  }

  std::string backend_name() const override { return "shm"; }

  std::shared_ptr<Work> all_reduce(Tensor& tensor, const AllReduceOptions& opts) override {
    detail::check_tensor(*this, "all_reduce", tensor, "tensor");
    Tensor t = tensor;
    const ReduceOp op = opts.op;
    return issue(*collectives_, ShmOpKind::ALL_REDUCE, t.numel(), t.dtype(), 0, op, opts,
                 [this, t, op](ShmOp& o) { comm_.all_reduce(o, t.raw_data(), t.numel(), t.dtype(), op); });
  }

  std::shared_ptr<Work> broadcast(Tensor& tensor, const BroadcastOptions& opts) override {
    detail::check_tensor(*this, "broadcast", tensor, "tensor");
    detail::check_peer(*this, "broadcast", opts.root, "root");
    Tensor t = tensor;
    const int root = opts.root;
    return issue(*collectives_, ShmOpKind::BROADCAST, t.numel(), t.dtype(), root, ReduceOp::SUM, opts,
                 [this, t, root](ShmOp& o) { comm_.broadcast(o, t.raw_data(), t.nbytes(), root); });
  }

  std::shared_ptr<Work> reduce(Tensor& tensor, const ReduceOptions& opts) override {
    detail::check_tensor(*this, "reduce", tensor, "tensor");
    detail::check_peer(*this, "reduce", opts.root, "root");
    Tensor t = tensor;
    const int root = opts.root;
    const ReduceOp op = opts.op;
    return issue(
        *collectives_, ShmOpKind::REDUCE, t.numel(), t.dtype(), root, op, opts,
        [this, t, root, op](ShmOp& o) { comm_.reduce(o, t.raw_data(), t.numel(), t.dtype(), op, root); });
  }

  std::shared_ptr<Work> all_gather(std::vector<Tensor>& outputs, const Tensor& input,
                                   const AllGatherOptions& opts) override {
    detail::check_tensor(*this, "all_gather", input, "input");
    detail::check_list(*this, "all_gather", outputs, input, "output");
    return gather_impl(ShmOpKind::ALL_GATHER, outputs, input, 0, false, opts);
  }

  std::shared_ptr<Work> gather(std::vector<Tensor>& outputs, const Tensor& input,
                               const GatherOptions& opts) override {
    detail::check_tensor(*this, "gather", input, "input");
    detail::check_peer(*this, "gather", opts.root, "root");
    if (rank_ == opts.root) detail::check_list(*this, "gather", outputs, input, "output");
    return gather_impl(ShmOpKind::GATHER, outputs, input, opts.root, true, opts);
  }

  std::shared_ptr<Work> scatter(Tensor& output, const std::vector<Tensor>& inputs,
                                const ScatterOptions& opts) override {
    detail::check_tensor(*this, "scatter", output, "output");
    detail::check_peer(*this, "scatter", opts.root, "root");
    const int root = opts.root;
    std::vector<Tensor> ins;
    if (rank_ == root) {
      detail::check_list(*this, "scatter", inputs, output, "input");
      ins = inputs;
    }
    Tensor out = output;
    return issue(*collectives_, ShmOpKind::SCATTER, out.numel(), out.dtype(), root, ReduceOp::SUM, opts,
                 [this, out, ins, root](ShmOp& o) {
                   comm_.scatter(o, out.raw_data(), const_pointers(ins), out.nbytes(), root);
                 });
  }

  std::shared_ptr<Work> reduce_scatter(Tensor& output, const std::vector<Tensor>& inputs,
                                       const ReduceScatterOptions& opts) override {
    detail::check_tensor(*this, "reduce_scatter", output, "output");
    detail::check_list(*this, "reduce_scatter", inputs, output, "input");
    Tensor out = output;
    std::vector<Tensor> ins = inputs;
    const ReduceOp op = opts.op;
    return issue(*collectives_, ShmOpKind::REDUCE_SCATTER, out.numel(), out.dtype(), 0, op, opts,
                 [this, out, ins, op](ShmOp& o) {
                   comm_.reduce_scatter(o, out.raw_data(), const_pointers(ins), out.numel(), out.dtype(), op);
                 });
  }

  std::shared_ptr<Work> alltoall(std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                                 const AllToAllOptions& opts) override {
    detail::check_alltoall(*this, outputs, inputs);
    std::vector<Tensor> outs = outputs;
    std::vector<Tensor> ins = inputs;
    return issue(*collectives_, ShmOpKind::ALLTOALL, ins[0].numel(), ins[0].dtype(), 0, ReduceOp::SUM, opts,
                 [this, outs, ins](ShmOp& o) {
                   comm_.alltoall(o, pointers(outs), const_pointers(ins), ins[0].nbytes());
                 });
  }

  std::shared_ptr<Work> send(const Tensor& tensor, int dst, const SendOptions& opts) override {
    detail::check_tensor(*this, "send", tensor, "tensor");
    detail::check_peer(*this, "send", dst, "dst");
    Tensor t = tensor;
    const int tag = opts.tag;
    return issue(*sends_, ShmOpKind::SEND, t.numel(), t.dtype(), dst, ReduceOp::SUM, opts,
                 [this, t, dst, tag](ShmOp& o) { comm_.send(o, t.raw_data(), t.nbytes(), dst, tag); });
  }

  std::shared_ptr<Work> recv(Tensor& tensor, int src, const RecvOptions& opts) override {
    detail::check_tensor(*this, "recv", tensor, "tensor");
    detail::check_peer(*this, "recv", src, "src");
    Tensor t = tensor;
    const int tag = opts.tag;
    return issue(*recvs_, ShmOpKind::RECV, t.numel(), t.dtype(), src, ReduceOp::SUM, opts,
                 [this, t, src, tag](ShmOp& o) { comm_.recv(o, t.raw_data(), t.nbytes(), src, tag); });
  }

  std::shared_ptr<Work> barrier(const BarrierOptions& opts) override {
    return issue(*collectives_, ShmOpKind::BARRIER, 0, DType::UINT8, 0, ReduceOp::SUM, opts,
                 [this](ShmOp& o) { comm_.barrier(o); });
  }

  Tensor allocate_buffer(int64_t numel, DType dtype) override {
    CREW_CHECK(numel >= 0, "allocate_buffer (rank ", rank_, ", group ", options_.group_name,
               "): numel must be >= 0, got ", numel);
    if (!shared_buffers_) return ProcessGroup::allocate_buffer(numel, dtype);
    const size_t bytes = size_t(numel) * dtype_size(dtype);
    void* data = nullptr;
    std::shared_ptr<const void> owner;
    issue(*collectives_, ShmOpKind::ALLOCATE, numel, dtype, 0, ReduceOp::SUM,
          BarrierOptions{.async_op = false},
          [&](ShmOp& o) { data = comm_.allocate_shared(o, bytes, &owner); })
        ->wait();
    if (data == nullptr) return Tensor::zeros({numel}, dtype);
    auto impl = std::make_shared<TensorImpl>();
    impl->storage = std::make_shared<Storage>(data, bytes, std::move(owner));
    impl->shape = {numel};
    impl->dtype = dtype;
    return Tensor(std::move(impl));
  }

 private:
  // Queues fn under the next sequence number; `opts` is the collective's options struct
  // (its timeout and async_op).
  template <typename Options, typename Fn>
  std::shared_ptr<Work> issue(detail::ShmOpQueue& queue, ShmOpKind kind, int64_t count, DType dtype, int root,
                              ReduceOp op, const Options& opts, Fn fn) {
    const uint64_t seq = next_seq_.fetch_add(1, std::memory_order_relaxed);
    const std::chrono::milliseconds timeout = op_timeout(opts.timeout);
    std::string what = str_cat(detail::shm_op_name(kind), " (rank ", rank_, ", seq ", seq, ", group ",
                               options_.group_name, ")");
    return queue.push(
        [this, kind, seq, count, dtype, root, op, timeout, fn = std::move(fn)]() mutable {
          ShmOp o = comm_.begin(kind, seq, count, dtype, root, op, timeout);
          fn(o);
        },
        std::move(what), timeout, opts.async_op);
  }

  template <typename Options>
  std::shared_ptr<Work> gather_impl(ShmOpKind kind, std::vector<Tensor>& outputs, const Tensor& input,
                                    int root, bool root_only, const Options& opts) {
    std::vector<Tensor> outs;
    if (!root_only || rank_ == root) outs = outputs;
    Tensor in = input;
    return issue(*collectives_, kind, in.numel(), in.dtype(), root, ReduceOp::SUM, opts,
                 [this, outs, in, root, root_only](ShmOp& o) {
                   comm_.all_gather(o, pointers(outs), in.raw_data(), in.nbytes(), root_only, root);
                 });
  }

  static std::vector<void*> pointers(const std::vector<Tensor>& ts) {
    std::vector<void*> out;
    for (const auto& t : ts) out.push_back(t.raw_data());
    return out;
  }
  static std::vector<const void*> const_pointers(const std::vector<Tensor>& ts) {
    std::vector<const void*> out;
    for (const auto& t : ts) out.push_back(t.raw_data());
    return out;
  }

  // Declared in destruction order: the queues stop (finishing their ops) before comm_ unmaps.
  const pid_t owner_pid_ = ::getpid();
  const bool shared_buffers_;
  detail::ShmComm comm_;
  std::atomic<uint64_t> next_seq_{0};
  std::unique_ptr<detail::ShmOpQueue> collectives_;
  std::unique_ptr<detail::ShmOpQueue> sends_;
  std::unique_ptr<detail::ShmOpQueue> recvs_;
};

}  // namespace

std::shared_ptr<ProcessGroup> create_shm_process_group(std::shared_ptr<Store> store, int rank, int size,
                                                       ProcessGroupOptions options, ShmOptions shm_options) {
  CREW_CHECK(store != nullptr, "create_shm_process_group (rank ", rank, "): store is null");
  return std::make_shared<ShmProcessGroup>(*store, rank, size, std::move(options), shm_options);
}

std::shared_ptr<ProcessGroup> create_shm_process_group(std::shared_ptr<Store> store, int rank, int size,
                                                       ProcessGroupOptions options) {
  return create_shm_process_group(std::move(store), rank, size, std::move(options), ShmOptions::from_env());
}

void register_shm_backend() {
  register_backend(
      "shm", [](const std::shared_ptr<Store>& store, int rank, int size, const ProcessGroupOptions& options) {
        return create_shm_process_group(store, rank, size, options);
      });
}

}  // namespace crew::dist
