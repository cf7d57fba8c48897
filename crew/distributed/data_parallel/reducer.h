#pragma once
// Reducer: the gradient-averaging engine behind DataParallel (Paddle's EagerReducer,
// PyTorch's Reducer), independent of any Layer.
//
// Buckets: parameters are grouped in registration order, one dtype per bucket (float32,
// bfloat16 or float16: an O2 model's 16-bit parameters and its float32 norm layers go to
// separate buckets, as PyTorch's per-dtype buckets); a bucket closes once its size
// reaches the limit (the parameter that crosses it is included): the limit of the bucket of
// the first parameters of each dtype is first_bucket_bytes (1 MiB), of later ones
// bucket_bytes_cap (25 MiB). The list is then reversed, so bucket 0 holds the LAST parameters, whose
// gradients complete first in backward, and the small 1 MiB bucket (the first parameters)
// is the last bucket, reduced last, keeping the exposed tail short.
//
// The buckets come from ProcessGroup::allocate_buffer: on the shm backend they live in shared
// memory and are reduced in place, reading the peers' buckets directly (no staging copies).
//
// One step: prepare_for_backward() (called by GradSync, for DataParallel's forward) arms the
// hooks. Each parameter's grad-ready hook writes its gradient into its bucket's flat buffer
// (unless the gradient already is that slot) and makes the slot the parameter's gradient at
// once (PyTorch's gradient_as_bucket_view); when a bucket is full it starts an async AVG
// all_reduce (the backend divides by world_size as it reduces), strictly in bucket order.
// When the last bucket has started, the reducer waits for all of them: the averaged
// gradients are then in the slots, nothing is copied out. A gradient kept from the last step
// (clear_grad() zeroes it in place) is accumulated into by backward and needs no copy; one
// dropped by clear_grad(false) is copied in once (docs/data_parallel.md, "Gradients and
// clear_grad"). The copies are crew::kernels (bucket_copy.h), dispatched on the bucket's
// place. A 16-bit bucket is averaged in float32 by the backend (each pair summed in float32
// and rounded, the division in float32: crew/distributed/backends/half_reduce.h).
//
// comm_dtype (PyTorch DDP's bf16_compress_hook / fp16_compress_hook): a float32 bucket is
// cast to the 16-bit comm_dtype into a second buffer of half the bytes, that one is summed
// over the ranks (as above), and the sum is cast back into the float32 bucket and divided by
// the world size there; the gradients are then float32 again, with the 16-bit format's
// rounding (relative 2^-8 for bfloat16).
//
// All of this runs on the thread running backward; the all_reduces run in the process
// group's queue meanwhile, in order, on its worker thread (without on_slow_wait the reducer
// waits with a plain wait(), which may run a bucket's all_reduce that nobody has started on
// the backward thread instead).
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "crew/autograd/autograd.h"
#include "crew/distributed/process_group/process_group.h"
#include "crew/tensor/tensor.h"

namespace crew::dist {

struct ReducerOptions {
  size_t bucket_bytes_cap = 25u << 20;  // Paddle's comm_buffer_size (25 MiB)
  // The bucket of the first parameters, reduced last (Paddle's last_comm_buffer_size, 1 MiB).
  size_t first_bucket_bytes = 1u << 20;
  bool find_unused_parameters = false;
  // Called while waiting for a bucket longer than poll_interval; may throw to abort the
  // wait (DataParallel uses it to detect peers whose data ran out).
  std::function<void()> on_slow_wait;
  std::chrono::milliseconds poll_interval{200};
  // bfloat16 or float16: float32 gradients communicated in that dtype (see above); nullopt:
  // every bucket in its gradients' dtype.
  std::optional<DType> comm_dtype;
};

// One bucket: indices into the parameter list and their offsets in the flat buffer.
struct Bucket {
  std::vector<size_t> params;
  std::vector<int64_t> offsets;  // element offset of each parameter in `flat`
  int64_t numel = 0;
  Tensor flat;  // in the parameters' dtype
  Tensor comm;  // with ReducerOptions::comm_dtype, flat in that dtype (what is sent); else undefined
  size_t pending = 0;
  std::shared_ptr<Work> work;
};

// Timing of the last finished step, in seconds.
struct ReducerStats {
  double comm_wait_seconds = 0;  // time backward spent blocked on all_reduce completion
  size_t steps = 0;
  size_t buckets = 0;
};

class Reducer {
 public:
  Reducer(std::vector<Tensor> params, std::vector<std::string> names, std::shared_ptr<ProcessGroup> group,
          ReducerOptions options = {});
  ~Reducer();
  Reducer(const Reducer&) = delete;
  Reducer& operator=(const Reducer&) = delete;

  // Arms the hooks for one backward pass from `outputs`. Throws StateError when the
  // previous armed pass never finished (a parameter got no gradient).
  void prepare_for_backward(const std::vector<Tensor>& outputs);
  // Bucket layout, for tests and docs: bucket b holds parameters buckets()[b].params.
  const std::vector<Bucket>& buckets() const { return buckets_; }
  const ReducerStats& stats() const { return stats_; }
  double total_comm_wait_seconds() const { return total_comm_wait_; }
  // Passes whose gradients were averaged, and passes armed (one more while one is in flight).
  size_t steps() const { return steps_; }
  size_t prepared_steps() const { return prepared_; }

  // Assigns parameters (by byte size, in order) to groups; exposed for tests. With dtypes
  // (one per parameter), each group holds one dtype: every dtype fills its own groups as
  // above, and the groups are ordered by their first parameter before the reversal.
  static std::vector<std::vector<size_t>> assign_buckets(const std::vector<size_t>& param_bytes,
                                                         size_t first_bucket_bytes, size_t bucket_bytes_cap,
                                                         const std::vector<DType>& dtypes = {});

 private:
  void on_grad_ready(size_t index);
  void mark_ready(size_t index, bool has_grad);
  // Whether `grad` is the view of parameter `index`'s slot in its bucket.
  bool is_slot(const Tensor& grad, size_t index) const;
  int64_t slot_offset(size_t index) const { return buckets_[bucket_of_[index]].offsets[slot_of_[index]]; }
  void check_parameters() const;
  void build_buckets();
  void launch_ready_buckets();
  // After a bucket's all_reduce: a comm_dtype bucket's sum cast back into flat and averaged.
  void finish_bucket(Bucket& bucket);
  void finalize();
  void wait_bucket(Bucket& bucket);
  std::string unused_message(const std::vector<size_t>& unused) const;

  std::vector<Tensor> params_;
  std::vector<std::string> names_;
  std::shared_ptr<ProcessGroup> group_;
  ReducerOptions options_;
  std::vector<Bucket> buckets_;
  std::vector<size_t> bucket_of_;  // parameter -> bucket
  std::vector<size_t> slot_of_;    // parameter -> position in its bucket
  std::vector<Tensor> slots_;      // parameter -> its slot: a view of its bucket, shaped as it
  std::vector<autograd::HookId> hooks_;
  std::vector<bool> ready_;
  std::vector<size_t> unused_;
  size_t next_bucket_ = 0;
  bool armed_ = false;
  bool first_step_ = true;
  size_t steps_ = 0;
  size_t prepared_ = 0;
  ReducerStats stats_;
  double total_comm_wait_ = 0;
};

}  // namespace crew::dist
