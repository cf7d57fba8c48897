#pragma once
// GlooProcessGroup: the ProcessGroup over Gloo's TCP transport (backend "gloo").
//
//   auto store = std::make_shared<PrefixStore>("pg/0/", tcp_store);
//   GlooProcessGroup pg(store, rank, world, ProcessGroupOptions{std::chrono::seconds(30), "default"});
//   pg.all_reduce(grad, {.op = ReduceOp::AVG})->wait();
//
// The constructor rendezvouses: every rank publishes its listening address through the store
// and connects to every other (a full mesh); it blocks up to options.timeout. Collectives run
// in issue order in one WorkQueue per group: on its worker thread, or on the thread whose
// wait() finds it next (see WorkQueue); each Gloo call is bounded by the op's timeout (the
// options struct's, else options.timeout). A Gloo I/O failure (a peer died, a connection reset) becomes a
// CommError and a Gloo timeout a TimeoutError, both naming op, rank, sequence number and group; after one the
// group is unusable (later ops fail at once).
//
// Each collective starts with a preamble exchange in which the ranks compare what they issued
// (kind, size, dtype, root, reduction; gloo_agreement.h), so a mismatch is a DesyncError on
// every rank naming both calls, never an abort inside Gloo or a wrong result; the group stays
// usable after one. A collective whose messages fit in a preamble (up to 64 KiB each) moves its
// data in that same exchange, so the check costs it no round trip; a larger one runs Gloo's
// algorithm after the check.
//
// ReduceOp::AVG is SUM followed by division by size(); integer dtypes use integer division
// (truncation toward zero). Integer SUM/PROD wrap as C++ unsigned arithmetic does for uint8.
// send/recv run in the group's queue too: a matching pair must be issued in an order that does
// not leave both ranks sending first (as with any blocking send).
#include <chrono>
#include <memory>
#include <mutex>
#include <string>

#include "crew/distributed/backends/gloo/gloo_agreement.h"
#include "crew/distributed/process_group/process_group.h"
#include "crew/distributed/process_group/work_queue.h"
#include "crew/distributed/store/store.h"

namespace gloo {
class Context;
}

namespace crew::dist {

// Where the Gloo transport listens.
struct GlooOptions {
  static constexpr const char* kDefaultHostname = "127.0.0.1";
  // Address (or hostname) to bind and advertise; "" = resolve this host's name.
  std::string hostname = kDefaultHostname;
  // Network interface to bind instead of a hostname (CREW_GLOO_IFNAME); "" = use hostname.
  std::string iface;

  // From the environment: CREW_HOST, else this host's name when CREW_NNODES (PADDLE_NNODES)
  // > 1, else 127.0.0.1; CREW_GLOO_IFNAME.
  static GlooOptions from_env();
};

class GlooProcessGroup final : public ProcessGroup {
 public:
  GlooProcessGroup(std::shared_ptr<Store> store, int rank, int size, ProcessGroupOptions options,
                   GlooOptions gloo_options = GlooOptions::from_env());
  ~GlooProcessGroup() override;

  std::string backend_name() const override { return "gloo"; }

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
  // What a queued op runs after its preamble: `tag` is for its own Gloo calls, `preamble`
  // holds the peers' data when the op's messages fit in it (data_for was given).
  using Task = std::function<void(uint32_t tag, const detail::GlooPreamble& preamble)>;
  // Queues task; Gloo exceptions it throws become CommError / TimeoutError naming the op.
  // A collective first runs the preamble exchange of `call` (and data_for's data) on a tag
  // of its own, then task on the next; send/recv (collective = false) take no tags and no
  // preamble, so that ranks that do not take part in a send agree on the tags of later
  // collectives. The op runs under `timeout` (resolved: never kGroupTimeout); async_op as in
  // the options structs.
  std::shared_ptr<Work> submit(detail::GlooCall call, std::chrono::milliseconds timeout, bool async_op,
                               Task task, detail::PreambleDataFn data_for = nullptr, bool collective = true);
  // send (sending) or recv of `tensor` with `peer` on Gloo's point-to-point slot for `tag`.
  std::shared_ptr<Work> point_to_point(bool sending, const Tensor& tensor, int peer, int tag,
                                       std::chrono::milliseconds timeout, bool async_op);

  std::shared_ptr<::gloo::Context> context_;
  std::unique_ptr<detail::GlooPreamble> preamble_ = std::make_unique<detail::GlooPreamble>();
  std::unique_ptr<WorkQueue> queue_;
  std::mutex submit_mutex_;
  uint32_t next_tag_ = 0;
};

// The BackendFactory of "gloo" (GlooOptions from the environment).
std::shared_ptr<ProcessGroup> create_gloo_process_group(const std::shared_ptr<Store>& store, int rank,
                                                        int size, const ProcessGroupOptions& options);
// Registers create_gloo_process_group as backend "gloo" in the ProcessGroup registry.
void register_gloo_backend();

}  // namespace crew::dist
