#pragma once
// ProcessGroup: the collectives every communication backend provides (Gloo over TCP, shared
// memory within a host, ...), and Work, the handle of an asynchronous collective.
//
//   auto work = pg.all_reduce(grad, ReduceOp::SUM);   // starts; returns at once
//   ...                                               // overlap other work
//   work->wait();                                     // rethrows a failure or TimeoutError
//
// Ordering rule: on each group, collectives run in the order they are issued, and every
// member must issue the same collectives in the same order (each call takes the group's next
// sequence number, which error messages report). Tensors must be contiguous; a tensor passed
// to an async collective must stay alive and untouched until its Work completes.
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "crew/tensor/tensor.h"

namespace crew::dist {

enum class ReduceOp { SUM, MAX, MIN, PROD, AVG };
const char* reduce_op_name(ReduceOp op);

// The handle of one collective.
class Work {
 public:
  virtual ~Work() = default;
  // Blocks until the collective finished; rethrows its error (CommError, TimeoutError, ...).
  virtual void wait(std::chrono::milliseconds timeout) = 0;
  virtual bool is_completed() = 0;
  void wait() { wait(default_timeout_); }

 protected:
  // How long wait(timeout) blocks: a wait as long as the op's own timeout gets a grace, so
  // that the op fails first with its own error (which names the missing rank).
  std::chrono::milliseconds wait_limit(std::chrono::milliseconds timeout) const {
    if (timeout < default_timeout_ || timeout > std::chrono::milliseconds::max() - kOpTimeoutGrace) {
      return timeout;
    }
    return timeout + kOpTimeoutGrace;
  }
  static constexpr std::chrono::milliseconds kOpTimeoutGrace{2000};
  std::chrono::milliseconds default_timeout_{std::chrono::minutes(30)};
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
  virtual std::shared_ptr<Work> all_reduce(Tensor& tensor, ReduceOp op) = 0;
  // In place: every rank ends with root's tensor.
  virtual std::shared_ptr<Work> broadcast(Tensor& tensor, int root) = 0;
  // In place on root: root ends with the reduction; other ranks' tensors are unspecified.
  virtual std::shared_ptr<Work> reduce(Tensor& tensor, int root, ReduceOp op) = 0;
  // outputs[r] receives rank r's input; outputs has size() tensors shaped like input.
  virtual std::shared_ptr<Work> all_gather(std::vector<Tensor>& outputs, const Tensor& input) = 0;
  // On root, outputs[r] receives rank r's input; elsewhere outputs is ignored.
  virtual std::shared_ptr<Work> gather(std::vector<Tensor>& outputs, const Tensor& input, int root) = 0;
  // Rank r receives root's inputs[r]; inputs is read on root only.
  virtual std::shared_ptr<Work> scatter(Tensor& output, const std::vector<Tensor>& inputs, int root) = 0;
  // Rank r receives the reduction over ranks of inputs[r].
  virtual std::shared_ptr<Work> reduce_scatter(Tensor& output, const std::vector<Tensor>& inputs,
                                               ReduceOp op) = 0;
  // outputs[r] receives rank r's inputs[this rank].
  virtual std::shared_ptr<Work> alltoall(std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs) = 0;
  virtual std::shared_ptr<Work> send(const Tensor& tensor, int dst, int tag) = 0;
  virtual std::shared_ptr<Work> recv(Tensor& tensor, int src, int tag) = 0;
  virtual std::shared_ptr<Work> barrier() = 0;

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
