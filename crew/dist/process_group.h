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

 protected:
  int rank_;
  int size_;
  ProcessGroupOptions options_;
};

}  // namespace crew::dist
