#pragma once
// ProcessGroup: the collectives every communication backend provides (Gloo over TCP, shared
// memory within a host, ...), each taking one options struct (as c10d's AllreduceOptions),
// and Work, the handle of an issued collective.
//
//   auto work = pg.all_reduce(grad, {.op = ReduceOp::SUM});  // starts; returns at once
//   ...                                                      // overlap other work
//   work->wait();                                            // rethrows a failure
//   pg.broadcast(t, {.root = 0, .async_op = false})->wait(); // "I wait at once"
//
// Ordering rule: on each group, collectives run in the order they are issued, and every
// member must issue the same collectives in the same order (each call takes the group's next
// sequence number, which error messages report). Tensors must be contiguous; a tensor passed
// to a collective must stay alive and untouched until its Work completes.
//
// The Work contract (every backend keeps it; tests/distributed/work_contract_test.cpp):
// - wait(): blocks until the op completed and rethrows its error (CommError, TimeoutError,
//   DesyncError, ...). The op's own timeout bounds it (the op fails with its own
//   TimeoutError, which names the rank it waited for). If nothing has started the op and
//   nothing runs before it, a backend may run it on the waiting thread.
// - wait(timeout): waits at most `timeout` and never runs the op on the calling thread (it
//   could not be abandoned after `timeout`); it makes sure the backend's own thread runs it.
//   When the op has not completed by then it throws TimeoutError "<op> (rank r, seq s, group
//   g): did not complete within <timeout>"; the op goes on, and a later wait() or
//   is_completed() sees its result. wait(0ms) polls: it returns (or rethrows the op's error)
//   when the op is done and throws that TimeoutError otherwise. Whether a TimeoutError is
//   the op's own or the caller's limit: is_completed() is true only after the op's own.
// - is_completed(): whether the op has finished (successfully or not); never blocks.
// - then(callback): runs callback(error) once, when the op's data is ready (error is null on
//   success). A CPU backend calls it when the op completes, on the thread that completed it
//   (its worker, or a waiter that ran the op), after wait() would return; on an op already
//   complete it runs at once on the calling thread. A device (GPU) backend calls it once the
//   op is ordered on a stream: its kernels are enqueued on the group's communication stream
//   and the caller's current stream has been made to wait on an event recorded after them,
//   so device work the callback enqueues on the current stream sees the result, while host
//   code must still wait() before it reads the tensor. A callback must not block and must not
//   wait() on ops of the same group; exceptions it throws are dropped.
//
// async_op in every options struct says how the caller will wait. true (the default): the op
// progresses on the backend's own thread while the caller does other work. false: the caller
// promises to call wait() right away, so a backend may leave the op to that wait (running it
// inline saves two thread hand-offs, which cost more than a small shm all_reduce) instead of
// waking its worker. Either way the op completes however the caller waits.
#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "crew/distributed/process_group/collective_options.h"
#include "crew/tensor/tensor.h"

namespace crew::dist {

// The handle of one collective (the contract is at the top of this file).
class Work {
 public:
  // Called once with the op's error (nullptr on success).
  using Callback = std::function<void(std::exception_ptr error)>;

  virtual ~Work() = default;
  // Blocks until the op completed; may run it on this thread; rethrows its error.
  virtual void wait() = 0;
  // Blocks at most `timeout`, never runs the op here; TimeoutError when it is not done.
  virtual void wait(std::chrono::milliseconds timeout) = 0;
  virtual bool is_completed() = 0;
  // Runs `callback` once when the op's data is ready (at once if it already is).
  virtual void then(Callback callback) = 0;

 protected:
  // What wait() allows beyond the op's own timeout, so that the op fails first with its own
  // error (which names the missing rank) rather than the wait with a vaguer one.
  static constexpr std::chrono::milliseconds kOpTimeoutGrace{2000};
  static std::chrono::milliseconds wait_limit(std::chrono::milliseconds op_timeout) {
    return op_timeout > std::chrono::milliseconds::max() - kOpTimeoutGrace ? op_timeout
                                                                           : op_timeout + kOpTimeoutGrace;
  }
  // Runs the callbacks (each once, exceptions dropped): what a backend's completion calls.
  static void run_callbacks(std::vector<Callback>& callbacks, const std::exception_ptr& error);
};

struct ProcessGroupOptions {
  static constexpr std::chrono::milliseconds kDefaultTimeout{std::chrono::minutes(30)};
  std::chrono::milliseconds timeout = kDefaultTimeout;  // per collective (CREW_TIMEOUT overrides)
  std::string group_name = "default";
};

class ProcessGroup {
 public:
  ProcessGroup(int rank, int size, ProcessGroupOptions options)
      : rank_(rank), size_(size), options_(std::move(options)) {}
  virtual ~ProcessGroup() = default;
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  const ProcessGroupOptions& options() const { return options_; }
  virtual std::string backend_name() const = 0;

  // In place: every rank ends with the reduction of all ranks' tensors.
  virtual std::shared_ptr<Work> all_reduce(Tensor& tensor, const AllReduceOptions& options = {}) = 0;
  // In place: every rank ends with options.root's tensor.
  virtual std::shared_ptr<Work> broadcast(Tensor& tensor, const BroadcastOptions& options = {}) = 0;
  // In place on root: root ends with the reduction; other ranks' tensors are unspecified.
  virtual std::shared_ptr<Work> reduce(Tensor& tensor, const ReduceOptions& options = {}) = 0;
  // outputs[r] receives rank r's input; outputs has size() tensors shaped like input.
  virtual std::shared_ptr<Work> all_gather(std::vector<Tensor>& outputs, const Tensor& input,
                                           const AllGatherOptions& options = {}) = 0;
  // On root, outputs[r] receives rank r's input; elsewhere outputs is ignored.
  virtual std::shared_ptr<Work> gather(std::vector<Tensor>& outputs, const Tensor& input,
                                       const GatherOptions& options = {}) = 0;
  // Rank r receives root's inputs[r]; inputs is read on root only.
  virtual std::shared_ptr<Work> scatter(Tensor& output, const std::vector<Tensor>& inputs,
                                        const ScatterOptions& options = {}) = 0;
  // Rank r receives the reduction over ranks of inputs[r].
  virtual std::shared_ptr<Work> reduce_scatter(Tensor& output, const std::vector<Tensor>& inputs,
                                               const ReduceScatterOptions& options = {}) = 0;
  // outputs[r] receives rank r's inputs[this rank].
  virtual std::shared_ptr<Work> alltoall(std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                                         const AllToAllOptions& options = {}) = 0;
  virtual std::shared_ptr<Work> send(const Tensor& tensor, int dst, const SendOptions& options = {}) = 0;
  virtual std::shared_ptr<Work> recv(Tensor& tensor, int src, const RecvOptions& options = {}) = 0;
  virtual std::shared_ptr<Work> barrier(const BarrierOptions& options = {}) = 0;

  // The timeout an op with this option runs under: its own, or the group's when it has none.
  std::chrono::milliseconds op_timeout(std::chrono::milliseconds option) const {
    return option.count() > 0 ? option : options_.timeout;
  }

  // A zero-filled 1-d tensor for this group's collectives, placed where the backend can
  // reduce it in place (as NCCL's registered buffers): shm maps it into every rank, so an
  // all_reduce of it, or of a part at the same offset on every rank, reads the peers' data
  // directly instead of copying it through staging buffers. Collective: every rank allocates
  // the same sizes in the same order. Default (and when shared memory runs short): an
  // ordinary tensor.
  virtual Tensor allocate_buffer(int64_t numel, DType dtype);

 protected:
  int rank_;
  int size_;
  ProcessGroupOptions options_;
};

class Store;

// ---- Backend registry ----
// A backend factory creates this rank's ProcessGroup of `size` ranks, rendezvousing through
// `store` (already namespaced to the group: keys need no group prefix) within options.timeout.
using BackendFactory = std::function<std::shared_ptr<ProcessGroup>(
    const std::shared_ptr<Store>& store, int rank, int size, const ProcessGroupOptions& options)>;

// Registers (or replaces) the factory for `name` ("gloo", "shm", ...). Thread-safe.
void register_backend(const std::string& name, BackendFactory factory);
bool is_backend_registered(const std::string& name);
std::vector<std::string> registered_backends();
// Creates a group with the named backend; ValueError listing the registered ones otherwise.
std::shared_ptr<ProcessGroup> create_process_group(const std::string& backend,
                                                   const std::shared_ptr<Store>& store, int rank, int size,
                                                   const ProcessGroupOptions& options);

namespace detail {
// Argument checks shared by the backends; messages read
// "all_gather (rank 1, group default): expected 4 output tensors, got 3".
void check_tensor(const ProcessGroup& pg, const char* op, const Tensor& tensor, const char* what);
void check_peer(const ProcessGroup& pg, const char* op, int peer, const char* what);
// Checks list.size() == size() and every entry matches `like` in dtype and numel.
void check_list(const ProcessGroup& pg, const char* op, const std::vector<Tensor>& list, const Tensor& like,
                const char* what);
// check_peer, and peer is another rank and tag >= 0 (what send/recv need).
void check_p2p(const ProcessGroup& pg, const char* op, int peer, int tag, const char* what);
// alltoall's arguments: size() inputs and size() outputs, all like inputs[0].
void check_alltoall(const ProcessGroup& pg, const std::vector<Tensor>& outputs,
                    const std::vector<Tensor>& inputs);
}  // namespace detail

// A group of one rank (backend "self"): every collective is a local copy and completes at
// once. Used for a world of one process, where init_parallel_env does nothing.
std::shared_ptr<ProcessGroup> create_self_process_group(ProcessGroupOptions options = {});

}  // namespace crew::dist
