#pragma once
// crew::dist::GradSync: the gradient-synchronisation engine of data-parallel training, with
// no Layer in it. crew::DataParallel (a Layer around a C++ model) and the Python
// crew.DataParallel (around a Python-defined layer) both wrap one.
//
//   crew::dist::init_parallel_env();
//   crew::dist::GradSync sync(net->named_parameters(), net->buffers());  // broadcast from rank 0
//   Tensor out = (*net)(x);
//   sync.prepare_for_backward({out});         // arms the Reducer for this backward
//   loss_of(out).backward();                  // buckets all_reduce while backward runs
//   { auto guard = sync.no_sync(); ... }      // accumulate locally, average later
//
// What it owns:
// * at construction, the broadcast of every parameter and buffer from the group's first rank
//   (one coalesced broadcast per dtype), so all ranks start equal;
// * the Reducer (reducer.h) over the trainable parameters (stop_gradient == false): buckets,
//   hooks, the all_reduces that overlap backward, the unused-parameter checks;
// * the no_sync state (decided at prepare_for_backward, as Paddle decides it at forward);
// * the uneven-input check: a rank waiting on a gradient all_reduce polls the job's store for
//   peers that finished with fewer steps and throws a StateError naming them; a finished rank
//   (destructor) publishes its step count and exits 1 on a mismatch. Its keys live in the
//   store of the initialized process group (global_store(), already under the job's restart
//   count and init generation), under "dp/<group id>/<engine id>/".
//
// Gradients (docs/data_parallel.md, "Gradients and clear_grad"): after a synchronised
// backward every trainable parameter's gradient is a view of its bucket slot; it is never
// copied out. clear_grad() (set_to_zero) zeroes the views in place; clear_grad(false) drops
// them (grad None) and the next synchronised backward copies each new gradient into its slot
// once and hands the view back at once.
//
// In a world of one process (no group given, world size 1) it logs Paddle's warning and does
// nothing: no broadcast, no Reducer.
#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "crew/distributed/data_parallel/reducer.h"
#include "crew/distributed/parallel/parallel.h"

namespace crew::dist {

class Store;

struct GradSyncOptions {
  size_t bucket_bytes_cap = 25u << 20;  // Paddle's comm_buffer_size (25 MiB)
  // The bucket of the first parameters, reduced last (Paddle's last_comm_buffer_size, 1 MiB).
  size_t first_bucket_bytes = 1u << 20;
  bool find_unused_parameters = false;
  // bfloat16 or float16: float32 gradients all-reduced in that dtype, half the bytes
  // (ReducerOptions::comm_dtype, PyTorch DDP's bf16_compress_hook); nullopt: as they are.
  std::optional<DType> comm_dtype;
  Group* group = nullptr;  // nullptr = the default group
  // How long a finished rank waits at destruction for its peers to confirm the same step count.
  std::chrono::milliseconds exit_check_timeout{std::chrono::seconds(10)};
};

class GradSync {
 public:
  // `parameters`: every parameter under its name (names only label errors; any spelling);
  // those with stop_gradient are broadcast but not reduced. `buffers`: broadcast only.
  GradSync(const std::vector<std::pair<std::string, Tensor>>& parameters, const std::vector<Tensor>& buffers,
           GradSyncOptions options = {});
  ~GradSync();
  GradSync(const GradSync&) = delete;
  GradSync& operator=(const GradSync&) = delete;

  // Arms the Reducer for the backward of `outputs`. No-op in a world of one process, under
  // no_sync, or with gradients disabled.
  void prepare_for_backward(const std::vector<Tensor>& outputs);

  // While a guard lives, forward+backward accumulate gradients locally (no all_reduce).
  class NoSyncGuard {
   public:
    explicit NoSyncGuard(GradSync& sync) : sync_(sync), previous_(sync.grad_need_sync_) {
      sync.grad_need_sync_ = false;
    }
    ~NoSyncGuard() { sync_.grad_need_sync_ = previous_; }
    NoSyncGuard(const NoSyncGuard&) = delete;
    NoSyncGuard& operator=(const NoSyncGuard&) = delete;

   private:
    GradSync& sync_;
    bool previous_;
  };
  NoSyncGuard no_sync() { return NoSyncGuard(*this); }
  // The flag no_sync() clears, for bindings whose scope is not a C++ block (Python's
  // `with model.no_sync():`).
  bool grad_need_sync() const { return grad_need_sync_; }
  void set_grad_need_sync(bool sync) { grad_need_sync_ = sync; }

  // Null in a world of one process.
  const Reducer* reducer() const { return reducer_.get(); }
  int world_size() const { return world_size_; }

 private:
  void broadcast_state(const std::vector<Tensor>& tensors);
  void check_peers_running();
  void announce_done();
  std::string done_key(int global_rank) const;

  GradSyncOptions options_;
  std::shared_ptr<Group> group_holder_;
  Group* group_ = nullptr;
  std::shared_ptr<Store> store_;  // the group's store, keys under "dp/<group id>/<engine id>/"
  int world_size_ = 1;
  std::unique_ptr<Reducer> reducer_;
  bool grad_need_sync_ = true;
};

}  // namespace crew::dist
