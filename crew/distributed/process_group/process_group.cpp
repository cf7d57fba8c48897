#include "crew/distributed/process_group/process_group.h"

#include <map>
#include <mutex>

#include "crew/core/check.h"
#include "crew/core/error.h"
#include "crew/distributed/process_group/staged_process_group.h"
#include "crew/distributed/process_group/work.h"

namespace crew::dist {

const char* reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::SUM:
      return "SUM";
    case ReduceOp::MAX:
      return "MAX";
    case ReduceOp::MIN:
      return "MIN";
    case ReduceOp::PROD:
      return "PROD";
    case ReduceOp::AVG:
      return "AVG";
  }
  return "UNKNOWN";
}

void Work::run_callbacks(std::vector<Callback>& callbacks, const std::exception_ptr& error) {
  for (auto& callback : callbacks) {
    try {
      callback(error);
    } catch (...) {
      // A callback's failure is not the op's: the op's result stays what wait() reports.
    }
  }
  callbacks.clear();
}

Tensor ProcessGroup::allocate_buffer(int64_t numel, DType dtype) {
  CREW_CHECK(numel >= 0, "allocate_buffer (rank ", rank_, ", group ", options_.group_name,
             "): numel must be >= 0, got ", numel);
  return Tensor::zeros({numel}, dtype);
}

// ---- registry ----

namespace {

struct Registry {
  std::mutex mutex;
  std::map<std::string, BackendFactory> factories;
};

Registry& registry() {
  static Registry r;
  return r;
}

}  // namespace

void register_backend(const std::string& name, BackendFactory factory) {
  CREW_CHECK(!name.empty() && factory, "register_backend: need a name and a factory, got '", name, "'");
  std::lock_guard<std::mutex> lock(registry().mutex);
  registry().factories[name] = std::move(factory);
}

bool is_backend_registered(const std::string& name) {
  std::lock_guard<std::mutex> lock(registry().mutex);
  return registry().factories.count(name) > 0;
}

std::vector<std::string> registered_backends() {
  std::lock_guard<std::mutex> lock(registry().mutex);
  std::vector<std::string> names;
  for (const auto& [name, factory] : registry().factories) names.push_back(name);
  return names;
}

std::shared_ptr<ProcessGroup> create_process_group(const std::string& backend,
                                                   const std::shared_ptr<Store>& store, int rank, int size,
                                                   const ProcessGroupOptions& options) {
  BackendFactory factory;
  {
    std::lock_guard<std::mutex> lock(registry().mutex);
    auto it = registry().factories.find(backend);
    if (it != registry().factories.end()) factory = it->second;
  }
  if (!factory) {
    std::string known;
    for (const auto& name : registered_backends()) known += (known.empty() ? "" : ", ") + name;
    CREW_THROW(ValueError, "create_process_group (rank ", rank, ", group ", options.group_name,
               "): unknown backend '", backend, "'; registered backends: ", known.empty() ? "none" : known);
  }
  CREW_CHECK(size >= 1 && rank >= 0 && rank < size, "create_process_group (group ", options.group_name,
             "): rank ", rank, " is not in [0, ", size, ")");
  return wrap_for_devices(factory(store, rank, size, options));
}

// ---- checks ----

namespace detail {

namespace {
std::string where(const ProcessGroup& pg, const char* op) {
  return str_cat(op, " (rank ", pg.rank(), ", group ", pg.options().group_name, ")");
}
}  // namespace

void check_tensor(const ProcessGroup& pg, const char* op, const Tensor& tensor, const char* what) {
  CREW_CHECK(tensor.defined(), where(pg, op), ": ", what, " is an undefined tensor");
}

void check_peer(const ProcessGroup& pg, const char* op, int peer, const char* what) {
  CREW_CHECK(peer >= 0 && peer < pg.size(), where(pg, op), ": ", what, " ", peer,
             " is not a rank of the group (size ", pg.size(), ")");
}

void check_list(const ProcessGroup& pg, const char* op, const std::vector<Tensor>& list, const Tensor& like,
                const char* what) {
  CREW_CHECK(static_cast<int>(list.size()) == pg.size(), where(pg, op), ": expected ", pg.size(), " ", what,
             " tensors, got ", list.size());
  for (size_t i = 0; i < list.size(); ++i) {
    CREW_CHECK(list[i].defined(), where(pg, op), ": ", what, "[", i, "] is an undefined tensor");
    CREW_CHECK(list[i].dtype() == like.dtype(), where(pg, op), ": ", what, "[", i, "] has dtype ",
               dtype_name(list[i].dtype()), ", expected ", dtype_name(like.dtype()));
    CREW_CHECK(list[i].numel() == like.numel(), where(pg, op), ": ", what, "[", i, "] has ", list[i].numel(),
               " elements, expected ", like.numel());
  }
}

void check_p2p(const ProcessGroup& pg, const char* op, int peer, int tag, const char* what) {
  check_peer(pg, op, peer, what);
  CREW_CHECK(peer != pg.rank() && tag >= 0, where(pg, op), ": needs another rank and a tag >= 0, got ", what,
             " ", peer, ", tag ", tag);
}

void check_alltoall(const ProcessGroup& pg, const std::vector<Tensor>& outputs,
                    const std::vector<Tensor>& inputs) {
  CREW_CHECK(!inputs.empty(), where(pg, "alltoall"), ": expected ", pg.size(), " input tensors, got 0");
  check_list(pg, "alltoall", inputs, inputs[0], "input");
  check_list(pg, "alltoall", outputs, inputs[0], "output");
}

}  // namespace detail

// ---- the group of one rank ----

namespace {

class SelfProcessGroup final : public ProcessGroup {
 public:
  explicit SelfProcessGroup(ProcessGroupOptions options) : ProcessGroup(0, 1, std::move(options)) {}
  std::string backend_name() const override { return "self"; }

  std::shared_ptr<Work> all_reduce(Tensor& tensor, const AllReduceOptions&) override {
    detail::check_tensor(*this, "all_reduce", tensor, "tensor");
    return done("all_reduce");
  }
  std::shared_ptr<Work> broadcast(Tensor& tensor, const BroadcastOptions& options) override {
    detail::check_tensor(*this, "broadcast", tensor, "tensor");
    detail::check_peer(*this, "broadcast", options.root, "root");
    return done("broadcast");
  }
  std::shared_ptr<Work> reduce(Tensor& tensor, const ReduceOptions& options) override {
    detail::check_tensor(*this, "reduce", tensor, "tensor");
    detail::check_peer(*this, "reduce", options.root, "root");
    return done("reduce");
  }
  std::shared_ptr<Work> all_gather(std::vector<Tensor>& outputs, const Tensor& input,
                                   const AllGatherOptions&) override {
    detail::check_tensor(*this, "all_gather", input, "input");
    detail::check_list(*this, "all_gather", outputs, input, "output");
    outputs[0].copy_(input);
    return done("all_gather");
  }
  std::shared_ptr<Work> gather(std::vector<Tensor>& outputs, const Tensor& input,
                               const GatherOptions& options) override {
    detail::check_tensor(*this, "gather", input, "input");
    detail::check_peer(*this, "gather", options.root, "root");
    detail::check_list(*this, "gather", outputs, input, "output");
    outputs[0].copy_(input);
    return done("gather");
  }
  std::shared_ptr<Work> scatter(Tensor& output, const std::vector<Tensor>& inputs,
                                const ScatterOptions& options) override {
    detail::check_tensor(*this, "scatter", output, "output");
    detail::check_peer(*this, "scatter", options.root, "root");
    detail::check_list(*this, "scatter", inputs, output, "input");
    output.copy_(inputs[0]);
    return done("scatter");
  }
  std::shared_ptr<Work> reduce_scatter(Tensor& output, const std::vector<Tensor>& inputs,
                                       const ReduceScatterOptions&) override {
    detail::check_tensor(*this, "reduce_scatter", output, "output");
    detail::check_list(*this, "reduce_scatter", inputs, output, "input");
    output.copy_(inputs[0]);
    return done("reduce_scatter");
  }
  std::shared_ptr<Work> alltoall(std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                                 const AllToAllOptions&) override {
    CREW_CHECK(!inputs.empty(), "alltoall (rank 0, group ", options_.group_name,
               "): expected 1 input tensor, got 0");
    detail::check_list(*this, "alltoall", inputs, inputs[0], "input");
    detail::check_list(*this, "alltoall", outputs, inputs[0], "output");
    outputs[0].copy_(inputs[0]);
    return done("alltoall");
  }
  std::shared_ptr<Work> send(const Tensor&, int, const SendOptions&) override {
    CREW_THROW(ValueError, "send (rank 0, group ", options_.group_name,
               "): a group of one rank has no peer to send to");
  }
  std::shared_ptr<Work> recv(Tensor&, int, const RecvOptions&) override {
    CREW_THROW(ValueError, "recv (rank 0, group ", options_.group_name,
               "): a group of one rank has no peer to receive from");
  }
  std::shared_ptr<Work> barrier(const BarrierOptions&) override { return done("barrier"); }

 private:
  std::shared_ptr<Work> done(const char* op) {
    return completed_work(OpInfo{op, 0, seq_++, options_.group_name});
  }
  uint64_t seq_ = 0;
};

}  // namespace

std::shared_ptr<ProcessGroup> create_self_process_group(ProcessGroupOptions options) {
  return std::make_shared<SelfProcessGroup>(std::move(options));
}

}  // namespace crew::dist
