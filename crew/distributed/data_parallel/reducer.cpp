#include "crew/distributed/data_parallel/reducer.h"

#include <algorithm>
#include <map>
#include <unordered_set>

#include "crew/core/check.h"
#include "crew/core/error.h"
#include "crew/core/timer.h"
#include "crew/tensor/kernels/bucket_copy.h"
#include "crew/tensor/kernels/fill_cast.h"
#include "crew/tensor/kernels/grad_clip.h"

namespace crew::dist {
namespace {

const char* kUnfinishedMessage =
    "DataParallel: a serious error has occurred here. The previous backward pass did not produce a "
    "gradient for every parameter, so its gradients were never averaged. Please set "
    "find_unused_parameters=True to traverse the backward graph in each step. If you have set it, there "
    "may be several reasons for this error: 1) all forward outputs derived from the module parameters "
    "must participate in the calculation of the loss; 2) multiple forwards and one backward are not "
    "supported; 3) the previous step's backward was skipped.";

}  // namespace

std::vector<std::vector<size_t>> Reducer::assign_buckets(const std::vector<size_t>& param_bytes,
                                                         size_t first_bucket_bytes, size_t bucket_bytes_cap,
                                                         const std::vector<DType>& dtypes) {
  CREW_CHECK(dtypes.empty() || dtypes.size() == param_bytes.size(), "Reducer: one dtype per parameter");
  struct Open {
    std::vector<size_t> params;
    size_t bytes = 0;
    bool closed_one = false;  // a group of this dtype was closed: later ones take the cap
  };
  std::map<DType, Open> open;  // per dtype, the group being filled
  std::vector<std::vector<size_t>> groups;
  for (size_t i = 0; i < param_bytes.size(); ++i) {
    Open& g = open[dtypes.empty() ? DType::FLOAT32 : dtypes[i]];
    g.params.push_back(i);
    g.bytes += param_bytes[i];
    if (g.bytes >= (g.closed_one ? bucket_bytes_cap : first_bucket_bytes)) {
      groups.push_back(std::move(g.params));
      g = Open{{}, 0, true};
    }
  }
  for (auto& [dtype, g] : open) {
    if (!g.params.empty()) groups.push_back(std::move(g.params));
  }
  std::sort(groups.begin(), groups.end(), [](const auto& a, const auto& b) { return a.front() < b.front(); });
  std::reverse(groups.begin(), groups.end());
  return groups;
}

void Reducer::check_parameters() const {
  CREW_CHECK(group_ != nullptr, "DataParallel: no process group");
  CREW_CHECK(!params_.empty(),
             "DataParallel: this model does not have any parameters to train, and does not "
             "need to use DataParallel");
  CREW_CHECK_EQ(params_.size(), names_.size(), "Reducer: one name per parameter");
  CREW_CHECK(!options_.comm_dtype || is_low_precision(*options_.comm_dtype), "DataParallel (rank ",
             group_->rank(), "): comm_dtype must be bfloat16 or float16, got ",
             dtype_name(*options_.comm_dtype));
  for (size_t i = 0; i < params_.size(); ++i) {
    const DType dtype = params_[i].dtype();
    CREW_CHECK(dtype == DType::FLOAT32 || is_low_precision(dtype), "DataParallel: parameter ", names_[i],
               " has dtype ", dtype_name(dtype),
               "; only float32, bfloat16 and float16 parameters are supported");
    CREW_CHECK(params_[i].numel() > 0, "DataParallel: parameter ", names_[i], " is empty");
    CREW_CHECK_T(DeviceError, params_[i].place() == params_[0].place(), "DataParallel: parameter ", names_[i],
                 " is on ", params_[i].place().to_string(), ", parameter ", names_[0], " on ",
                 params_[0].place().to_string(), "; all parameters must be on one place");
  }
}

void Reducer::build_buckets() {
  std::vector<size_t> bytes;
  std::vector<DType> dtypes;
  for (const Tensor& p : params_) {
    bytes.push_back(p.nbytes());
    dtypes.push_back(p.dtype());
  }
  auto groups = assign_buckets(bytes, options_.first_bucket_bytes, options_.bucket_bytes_cap, dtypes);
  bucket_of_.resize(params_.size());
  slot_of_.resize(params_.size());
  for (size_t b = 0; b < groups.size(); ++b) {
    Bucket bucket;
    bucket.params = groups[b];
    for (size_t s = 0; s < bucket.params.size(); ++s) {
      size_t p = bucket.params[s];
      bucket.offsets.push_back(bucket.numel);
      bucket.numel += params_[p].numel();
      bucket_of_[p] = b;
      slot_of_[p] = s;
    }
    // On the parameters' place; in host memory, in the group's own where it has some (shm:
    // reduced in place, no staging copies). Only the buffer that is sent needs to be there.
    const Place& place = params_[bucket.params[0]].place();
    const DType dtype = params_[bucket.params[0]].dtype();
    const bool compress = options_.comm_dtype && dtype == DType::FLOAT32;
    auto buffer = [&](DType t, bool sent) {
      return place.host_accessible() && sent ? group_->allocate_buffer(bucket.numel, t)
                                             : Tensor::zeros({bucket.numel}, t, place);
    };
    bucket.flat = buffer(dtype, !compress);
    if (compress) bucket.comm = buffer(*options_.comm_dtype, true);
    buckets_.push_back(std::move(bucket));
  }
}

Reducer::Reducer(std::vector<Tensor> params, std::vector<std::string> names,
                 std::shared_ptr<ProcessGroup> group, ReducerOptions options)
    : params_(std::move(params)),
      names_(std::move(names)),
      group_(std::move(group)),
      options_(std::move(options)) {
  check_parameters();
  build_buckets();
  slots_.resize(params_.size());
  for (size_t p = 0; p < params_.size(); ++p) {
    const Bucket& bucket = buckets_[bucket_of_[p]];
    const int64_t begin = bucket.offsets[slot_of_[p]];
    slots_[p] = bucket.flat.slice(begin, begin + params_[p].numel()).view(params_[p].shape());
  }
  ready_.assign(params_.size(), false);
  for (size_t i = 0; i < params_.size(); ++i) {
    hooks_.push_back(
        autograd::register_grad_ready_hook(params_[i], [this, i](const Tensor&) { on_grad_ready(i); }));
  }
  stats_.buckets = buckets_.size();
}

Reducer::~Reducer() {
  for (size_t i = 0; i < hooks_.size(); ++i) {
    try {
      autograd::remove_grad_ready_hook(params_[i], hooks_[i]);
    } catch (...) {
    }
  }
  // Never leave an all_reduce running on buffers we are about to free.
  for (auto& bucket : buckets_) {
    if (bucket.work) {
      try {
        bucket.work->wait();
      } catch (...) {
      }
    }
  }
}

std::string Reducer::unused_message(const std::vector<size_t>& unused) const {
  std::string names;
  for (size_t k = 0; k < unused.size() && k < 8; ++k) names += (k ? ", " : "") + names_[unused[k]];
  if (unused.size() > 8) names += ", ... (" + std::to_string(unused.size()) + " in all)";
  return names;
}

void Reducer::prepare_for_backward(const std::vector<Tensor>& outputs) {
  CREW_CHECK_T(StateError, !armed_, kUnfinishedMessage, " Parameters still waiting for a gradient: ", [&] {
    std::vector<size_t> waiting;
    for (size_t i = 0; i < ready_.size(); ++i)
      if (!ready_[i]) waiting.push_back(i);
    return unused_message(waiting);
  }());
  if (first_step_ || options_.find_unused_parameters) {
    auto leaves = autograd::reachable_leaves(outputs);
    std::unordered_set<const TensorImpl*> reached;
    for (const auto& t : leaves) reached.insert(t.impl());
    unused_.clear();
    for (size_t i = 0; i < params_.size(); ++i)
      if (!reached.count(params_[i].impl())) unused_.push_back(i);
    CREW_CHECK_T(StateError, unused_.empty() || options_.find_unused_parameters, "DataParallel (rank ",
                 group_->rank(), "): parameters [", unused_message(unused_),
                 "] are not used in computing the forward outputs, so they would never receive a gradient "
                 "and the gradient all_reduce would hang. Please set find_unused_parameters=True "
                 "(DataParallelOptions), or set stop_gradient on parameters you do not train.");
    first_step_ = false;
  }
  std::fill(ready_.begin(), ready_.end(), false);
  for (auto& bucket : buckets_) bucket.pending = bucket.params.size();
  next_bucket_ = 0;
  armed_ = true;
  ++prepared_;
  stats_ = ReducerStats{0, steps_, buckets_.size()};
  for (size_t i : unused_) mark_ready(i, params_[i].grad().defined());
}

void Reducer::on_grad_ready(size_t index) {
  if (!armed_) return;  // no_sync, eval, or a backward without a DataParallel forward
  CREW_CHECK_T(
      StateError, !ready_[index], "DataParallel: parameter [", index, "][", names_[index],
      "] has been ready before. Please set find_unused_parameters=True to traverse the backward graph "
      "in each step. Possible reasons: 1) in multiple reentrant backward phases some parameters are "
      "reused; 2) model parameters are used outside of the forward function.");
  mark_ready(index, true);
}

bool Reducer::is_slot(const Tensor& grad, size_t index) const {
  const Tensor& slot = slots_[index];
  return grad.is_same(slot) || (grad.shares_storage(slot) && grad.impl()->offset == slot.impl()->offset);
}

void Reducer::mark_ready(size_t index, bool has_grad) {
  ready_[index] = true;
  Tensor& param = params_[index];
  Tensor& slot = slots_[index];
  Tensor grad = has_grad ? param.grad() : Tensor();
  if (grad.defined()) {
    CREW_CHECK_EQ(grad.numel(), param.numel(), "DataParallel: gradient of ", names_[index],
                  " has the wrong size");
    // A gradient that is its slot already (kept from the last step, zeroed or accumulated
    // into) needs nothing; a new one (after clear_grad(false)) is copied in once.
    if (!is_slot(grad, index))
      kernels::pack_flat({grad}, buckets_[bucket_of_[index]].flat, slot_offset(index));
  } else {
    slot.zero_();
  }
  // The slot is the gradient from now on: the new tensor goes at once, not at the end of
  // backward, so backward never holds a second copy of the gradients.
  if (!grad.defined() || !grad.is_same(slot)) param.set_grad(slot);
  Bucket& bucket = buckets_[bucket_of_[index]];
  CREW_INTERNAL_ASSERT(bucket.pending > 0);
  if (--bucket.pending == 0) launch_ready_buckets();
}

void Reducer::launch_ready_buckets() {
  while (next_bucket_ < buckets_.size() && buckets_[next_bucket_].pending == 0) {
    Bucket& bucket = buckets_[next_bucket_];
    if (bucket.comm.defined()) {
      kernels::cast_kernel.get(bucket.flat.place().type)(bucket.flat, bucket.comm);
      bucket.work = group_->all_reduce(bucket.comm, {.op = ReduceOp::SUM});
    } else {
      bucket.work = group_->all_reduce(bucket.flat, {.op = ReduceOp::AVG});
    }
    ++next_bucket_;
  }
  if (next_bucket_ == buckets_.size()) finalize();
}

void Reducer::wait_bucket(Bucket& bucket) {
  if (!options_.on_slow_wait) {
    bucket.work->wait();
    return;
  }
  // Block (no sleep-polling, so the step goes on the moment the op completes), waking every
  // poll_interval to run the check. By the Work contract (process_group.h) wait(timeout)
  // never runs the op here, and its TimeoutError with the op not completed is our limit, not
  // the op's: the op's own result comes from the plain wait() once it has completed.
  for (;;) {
    try {
      bucket.work->wait(options_.poll_interval);
      return;
    } catch (const TimeoutError&) {
      if (bucket.work->is_completed()) {
        bucket.work->wait();  // returns, or rethrows the op's own error
        return;
      }
    }
    options_.on_slow_wait();
  }
}

void Reducer::finish_bucket(Bucket& bucket) {
  if (!bucket.comm.defined()) return;
  kernels::cast_kernel.get(bucket.flat.place().type)(bucket.comm, bucket.flat);
  kernels::scale_(bucket.flat, 1.0 / static_cast<double>(group_->size()));
}

void Reducer::finalize() {
  armed_ = false;
  Stopwatch wait_clock;
  for (auto& bucket : buckets_) wait_bucket(bucket);
  stats_.comm_wait_seconds = wait_clock.seconds();
  for (auto& bucket : buckets_) finish_bucket(bucket);
  total_comm_wait_ += stats_.comm_wait_seconds;
  // The averaged gradients (AVG: the backend divides while it reduces; with comm_dtype,
  // finish_bucket) stay in the buckets,
  // whose slots mark_ready made the parameters' gradients (PyTorch's
  // gradient_as_bucket_view): nothing is copied out.
  for (auto& bucket : buckets_) bucket.work.reset();
  ++steps_;
  stats_.steps = steps_;
}

}  // namespace crew::dist
