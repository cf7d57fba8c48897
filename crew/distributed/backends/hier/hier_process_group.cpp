#include "crew/distributed/backends/hier/hier_process_group.h"

#include <utility>

#include "crew/core/check.h"
#include "crew/core/env.h"
#include "crew/distributed/backends/backend_unavailable.h"
#include "crew/distributed/backends/gloo/gloo_process_group.h"
#include "crew/distributed/backends/hier/hier_all_reduce.h"
#include "crew/distributed/backends/shm/shm_process_group.h"
#include "crew/distributed/parallel/host_layout.h"
#include "crew/distributed/process_group/work_queue.h"
#include "crew/distributed/store/prefix_store.h"

namespace crew::dist {
namespace {

// A rank's vote on its host's shared memory: set up, lacked the space, failed otherwise.
constexpr const char* kVoteOk = "ok";
constexpr const char* kVoteNoSpace = "nospace: ";
constexpr const char* kVoteError = "error: ";

class HierProcessGroup final : public ProcessGroup {
 public:
  HierProcessGroup(const std::shared_ptr<Store>& store, int rank, int size, ProcessGroupOptions options)
      : ProcessGroup(rank, size, std::move(options)),
        layout_(HostLayout::from_ids(exchange_host_ids(*store, rank, size, options_.timeout))) {
    const int host = layout_.host_of(rank_);
    const auto& local = layout_.ranks_on(host);
    const int local_rank = layout_.local_rank(rank_);
    bool uniform = true;
    for (int h = 0; h < layout_.num_hosts(); ++h)
      uniform = uniform && layout_.ranks_on(h).size() == local.size();
    // The ranks of this local rank on every host (for local rank 0: the leaders). Only the
    // leaders' exists when the hosts run different numbers of ranks.
    const bool has_inter = layout_.num_hosts() > 1 && (uniform || local_rank == 0);
    std::vector<int> peers;
    for (int h = 0; h < layout_.num_hosts(); ++h)
      peers.push_back(layout_.ranks_on(h)[has_inter ? local_rank : 0]);
    // Sub-group errors name sub-group ranks; these say which group ranks they are.
    groups_.intra_name =
        str_cat("host ", host, "'s sub-group, whose ranks 0.. are group ranks ", join(local));
    groups_.inter_name = str_cat("local rank ", local_rank,
                                 "'s sub-group across hosts, whose ranks 0.. are group ranks ", join(peers));
    groups_.split_ok = uniform && local.size() > 1;
    const long long split_bytes =
        env::get_int("CREW_HIER_SPLIT_BYTES", static_cast<long long>(detail::kDefaultHierSplitMinBytes));
    CREW_CHECK(split_bytes >= 0, "CREW_HIER_SPLIT_BYTES must not be negative, got ", split_bytes);
    groups_.split_min_bytes = static_cast<size_t>(split_bytes);
    // 1. This host's shared memory; every rank of the group learns whether every host has it.
    std::string vote = kVoteOk;
    try {
      intra_ = local.size() == 1 ? create_self_process_group(sub_options("intra"))
                                 : create_shm_process_group(
                                       std::make_shared<PrefixStore>(str_cat("intra/", host, "/"), store),
                                       local_rank, static_cast<int>(local.size()), sub_options("intra"));
    } catch (const BackendUnavailableError& e) {
      vote = std::string(kVoteNoSpace) + e.what();
    } catch (const CommError& e) {
      vote = std::string(kVoteError) + e.what();
    }
    agree(*store, vote);
    // 2. The Gloo group of this local rank across hosts, then everyone's. The first needs
    //    only ranks of one local rank, so no rank waits in `all` for one still in `inter`.
    if (has_inter) {
      inter_ =
          create_gloo_process_group(std::make_shared<PrefixStore>(str_cat("inter/", local_rank, "/"), store),
                                    host, layout_.num_hosts(), sub_options(str_cat("inter", local_rank)));
    }
    groups_.intra = intra_.get();
    groups_.inter = inter_.get();
    all_ = create_gloo_process_group(std::make_shared<PrefixStore>("all/", store), rank_, size_,
                                     sub_options("all"));
    queue_ = std::make_unique<WorkQueue>(options_.group_name, rank_, options_.timeout);
  }

  ~HierProcessGroup() override { queue_.reset(); }  // the running op finishes before the sub-groups go

  std::string backend_name() const override { return "hier"; }

  std::shared_ptr<Work> all_reduce(Tensor& tensor, const AllReduceOptions& options) override {
    detail::check_tensor(*this, "all_reduce", tensor, "tensor");
    Tensor t = tensor;
    const ReduceOp op = options.op;
    const auto timeout = op_timeout(options.timeout);
    // Each of the three phases may take the whole timeout.
    return queue_->submit(
        "all_reduce",
        [this, t, op, timeout](const OpInfo& info) mutable {
          check_usable(info);
          detail::hier_all_reduce(
              t, op, size_, groups_,
              [&](const char* what, const std::string& sub_group,
                  const std::function<std::shared_ptr<Work>()>& start) {
                phase(info, what, sub_group, start);
              },
              timeout);
        },
        options.async_op, 3 * timeout);
  }

  std::shared_ptr<Work> broadcast(Tensor& tensor, const BroadcastOptions& options) override {
    detail::check_tensor(*this, "broadcast", tensor, "tensor");
    detail::check_peer(*this, "broadcast", options.root, "root");
    Tensor t = tensor;
    return delegate("broadcast", options,
                    [t](ProcessGroup& g, const auto& sub) mutable { return g.broadcast(t, sub); });
  }

  std::shared_ptr<Work> reduce(Tensor& tensor, const ReduceOptions& options) override {
    detail::check_tensor(*this, "reduce", tensor, "tensor");
    detail::check_peer(*this, "reduce", options.root, "root");
    Tensor t = tensor;
    return delegate("reduce", options,
                    [t](ProcessGroup& g, const auto& sub) mutable { return g.reduce(t, sub); });
  }

  std::shared_ptr<Work> all_gather(std::vector<Tensor>& outputs, const Tensor& input,
                                   const AllGatherOptions& options) override {
    detail::check_tensor(*this, "all_gather", input, "input");
    detail::check_list(*this, "all_gather", outputs, input, "output");
    std::vector<Tensor> outs = outputs;
    return delegate("all_gather", options, [outs, input](ProcessGroup& g, const auto& sub) mutable {
      return g.all_gather(outs, input, sub);
    });
  }

  std::shared_ptr<Work> gather(std::vector<Tensor>& outputs, const Tensor& input,
                               const GatherOptions& options) override {
    detail::check_tensor(*this, "gather", input, "input");
    detail::check_peer(*this, "gather", options.root, "root");
    if (rank_ == options.root) detail::check_list(*this, "gather", outputs, input, "output");
    std::vector<Tensor> outs = outputs;
    return delegate("gather", options, [outs, input](ProcessGroup& g, const auto& sub) mutable {
      return g.gather(outs, input, sub);
    });
  }

  std::shared_ptr<Work> scatter(Tensor& output, const std::vector<Tensor>& inputs,
                                const ScatterOptions& options) override {
    detail::check_tensor(*this, "scatter", output, "output");
    detail::check_peer(*this, "scatter", options.root, "root");
    if (rank_ == options.root) detail::check_list(*this, "scatter", inputs, output, "input");
    Tensor out = output;
    return delegate("scatter", options, [out, inputs](ProcessGroup& g, const auto& sub) mutable {
      return g.scatter(out, inputs, sub);
    });
  }

  std::shared_ptr<Work> reduce_scatter(Tensor& output, const std::vector<Tensor>& inputs,
                                       const ReduceScatterOptions& options) override {
    detail::check_tensor(*this, "reduce_scatter", output, "output");
    detail::check_list(*this, "reduce_scatter", inputs, output, "input");
    Tensor out = output;
    return delegate("reduce_scatter", options, [out, inputs](ProcessGroup& g, const auto& sub) mutable {
      return g.reduce_scatter(out, inputs, sub);
    });
  }

  std::shared_ptr<Work> alltoall(std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                                 const AllToAllOptions& options) override {
    detail::check_alltoall(*this, outputs, inputs);
    std::vector<Tensor> outs = outputs;
    return delegate("alltoall", options, [outs, inputs](ProcessGroup& g, const auto& sub) mutable {
      return g.alltoall(outs, inputs, sub);
    });
  }

  std::shared_ptr<Work> send(const Tensor& tensor, int dst, const SendOptions& options) override {
    detail::check_tensor(*this, "send", tensor, "tensor");
    detail::check_p2p(*this, "send", dst, options.tag, "peer");
    return delegate("send", options,
                    [tensor, dst](ProcessGroup& g, const auto& sub) { return g.send(tensor, dst, sub); });
  }

  std::shared_ptr<Work> recv(Tensor& tensor, int src, const RecvOptions& options) override {
    detail::check_tensor(*this, "recv", tensor, "tensor");
    detail::check_p2p(*this, "recv", src, options.tag, "peer");
    Tensor t = tensor;
    return delegate("recv", options,
                    [t, src](ProcessGroup& g, const auto& sub) mutable { return g.recv(t, src, sub); });
  }

  std::shared_ptr<Work> barrier(const BarrierOptions& options) override {
    return delegate("barrier", options, [](ProcessGroup& g, const auto& sub) { return g.barrier(sub); });
  }

 private:
  ProcessGroupOptions sub_options(const std::string& part) const {
    return ProcessGroupOptions{options_.timeout, str_cat(options_.group_name, ".", part)};
  }

  // Publishes this rank's vote and throws on every rank (the lowest failing rank's reason)
  // unless every rank's host set up its shared memory.
  void agree(Store& store, const std::string& vote) {
    store.set(str_cat("intra_vote/", rank_), vote);
    std::vector<std::string> keys;
    for (int r = 0; r < size_; ++r) keys.push_back(str_cat("intra_vote/", r));
    store.wait(keys, options_.timeout);
    for (int r = 0; r < size_; ++r) {
      const std::string v = store.get_string(keys[r]);
      if (v == kVoteOk) continue;
      intra_.reset();
      const bool no_space = v.rfind(kVoteNoSpace, 0) == 0;
      const std::string what =
          str_cat("hier rendezvous (rank ", rank_, ", group ", options_.group_name, "): host ",
                  layout_.host_of(r), " (rank ", r, ") could not set up its shared-memory group: ",
                  v.substr(std::string(no_space ? kVoteNoSpace : kVoteError).size()));
      if (no_space) CREW_THROW(dist::BackendUnavailableError, what);
      CREW_THROW(CommError, what);
    }
  }

  // Queues one collective of `all`: fn(group, sub_options) issues it with the caller's
  // options, its timeout resolved and waited for at once (it runs on this group's queue).
  template <typename Options, typename Fn>
  std::shared_ptr<Work> delegate(const char* op, const Options& options, Fn fn) {
    Options sub = options;
    sub.timeout = op_timeout(options.timeout);
    sub.async_op = false;
    return queue_->submit(
        op,
        [this, sub, fn = std::move(fn)](const OpInfo& info) mutable {
          phase(info, "gloo", "all ranks", [&] { return fn(*all_, sub); });
        },
        options.async_op, sub.timeout);
  }

  // Runs one sub-group op to completion. On a communication failure or timeout it destroys
  // this rank's sub-groups (their peers fail at once: shm peers read "left the group", Gloo
  // peers a closed connection) and rethrows under this op's name.
  template <typename Start>
  void phase(const OpInfo& info, const char* what, const std::string& sub_group, Start start) {
    check_usable(info);
    try {
      start()->wait();  // issued with async_op = false: no sub-group worker to wake
    } catch (const TimeoutError& e) {
      tear_down();
      CREW_THROW(TimeoutError, info.describe(), ": ", what, " (", sub_group, "): ", e.what());
    } catch (const CommError& e) {
      tear_down();
      CREW_THROW(CommError, info.describe(), ": ", what, " (", sub_group, "): ", e.what());
    }
  }

  void check_usable(const OpInfo& info) const {
    if (!intra_ || !all_) {
      CREW_THROW(CommError, info.describe(), ": the group was torn down by an earlier failure");
    }
  }

  void tear_down() {
    groups_.intra = groups_.inter = nullptr;  // the names stay: a failing phase still reports them
    intra_.reset();
    inter_.reset();
    all_.reset();
  }

  static std::string join(const std::vector<int>& ranks) {
    std::string out;
    for (int r : ranks) {
      if (!out.empty()) out += ',';
      out += std::to_string(r);
    }
    return out;
  }

  HostLayout layout_;
  detail::HierSubGroups groups_;  // borrows intra_ and inter_
  std::shared_ptr<ProcessGroup> intra_;
  std::shared_ptr<ProcessGroup> inter_;
  std::shared_ptr<ProcessGroup> all_;
  std::unique_ptr<WorkQueue> queue_;
};

}  // namespace

std::shared_ptr<ProcessGroup> create_hier_process_group(const std::shared_ptr<Store>& store, int rank,
                                                        int size, const ProcessGroupOptions& options) {
  CREW_CHECK(store != nullptr, "create_hier_process_group (rank ", rank, "): store is null");
  CREW_CHECK(size >= 1 && rank >= 0 && rank < size, "create_hier_process_group (group ", options.group_name,
             "): rank ", rank, " is not in [0, ", size, ")");
  return std::make_shared<HierProcessGroup>(store, rank, size, options);
}

void register_hier_backend() { register_backend("hier", create_hier_process_group); }

}  // namespace crew::dist
