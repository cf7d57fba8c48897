#include "crew/distributed/data_parallel/grad_sync.h"

#include <atomic>
#include <cstdio>
#include <exception>
#include <thread>

#include "crew/autograd/autograd.h"
#include "crew/core/check.h"
#include "crew/core/logging.h"
#include "crew/core/timer.h"
#include "crew/distributed/store/prefix_store.h"
#include "crew/tensor/kernels/bucket_copy.h"

namespace crew::dist {
namespace {

// Engines are numbered in creation order, which every rank shares (each builds the same
// models in the same order), so that their store keys meet.
std::atomic<int> next_engine_id{0};

int64_t parse_steps(const std::vector<uint8_t>& value) {
  return std::stoll(std::string(value.begin(), value.end()));
}

std::string uneven_message(int my_rank, int64_t my_step, int peer, int64_t peer_steps) {
  return str_cat(
      "DataParallel (rank ", my_rank, ", step ", my_step, "): rank ", peer, " finished after ", peer_steps,
      " steps and stopped calling the gradient all_reduce, so this rank would wait forever. The ranks "
      "ran different numbers of batches. Use crew::io::DistributedBatchSampler, which gives every rank "
      "the same number of batches (a plain BatchSampler over the whole data set under DataParallel "
      "hangs in Paddle with no output).");
}

}  // namespace

GradSync::GradSync(const std::vector<std::pair<std::string, Tensor>>& parameters,
                   const std::vector<Tensor>& buffers, GradSyncOptions options)
    : options_(std::move(options)) {
  const int id = next_engine_id.fetch_add(1);
  if (options_.group == nullptr && get_world_size() <= 1) {
    CREW_LOG(WARNING)
        << "The program will return to single-card operation. Please check 1, whether you use "
           "spawn or crew launch to start the program. 2, Whether it is a multi-card program. 3, "
           "Is the current environment multi-card.";
    return;
  }
  CREW_CHECK_T(StateError, options_.group != nullptr || is_initialized(), kNotInitializedMessage);
  if (options_.group != nullptr) {
    group_ = options_.group;
  } else {
    group_holder_ = default_group();
    group_ = group_holder_.get();
  }
  CREW_CHECK_T(StateError, group_->is_member(), "DataParallel: rank ", get_rank(),
               " is not a member of group ", group_->name());
  world_size_ = group_->nranks();
  std::vector<Tensor> state;
  for (const auto& [name, p] : parameters) state.push_back(p);
  state.insert(state.end(), buffers.begin(), buffers.end());
  broadcast_state(state);
  if (world_size_ <= 1) return;

  store_ = std::make_shared<PrefixStore>(str_cat("dp/", group_->id(), "/", id, "/"), global_store());
  std::vector<Tensor> trained;
  std::vector<std::string> names;
  for (const auto& [name, p] : parameters) {
    if (p.stop_gradient()) continue;
    trained.push_back(p);
    names.push_back(name);
  }
  ReducerOptions ropts;
  ropts.bucket_bytes_cap = options_.bucket_bytes_cap;
  ropts.first_bucket_bytes = options_.first_bucket_bytes;
  ropts.find_unused_parameters = options_.find_unused_parameters;
  ropts.comm_dtype = options_.comm_dtype;
  ropts.on_slow_wait = [this] { check_peers_running(); };
  reducer_ =
      std::make_unique<Reducer>(std::move(trained), std::move(names), group_->process_group_ptr(), ropts);
}

GradSync::~GradSync() {
  if (!reducer_) return;
  try {
    if (is_initialized()) announce_done();
  } catch (const std::exception& e) {
    CREW_LOG(WARNING) << "DataParallel: could not confirm the step count with the other ranks at exit: "
                      << e.what();
  }
}

void GradSync::broadcast_state(const std::vector<Tensor>& tensors) {
  // Coalesced: one flat buffer per dtype for all parameters and buffers.
  for (DType dtype : {DType::FLOAT32, DType::FLOAT64, DType::INT32, DType::INT64, DType::UINT8,
                      DType::BFLOAT16, DType::FLOAT16, DType::BOOL}) {
    std::vector<Tensor> parts;
    int64_t total = 0;
    for (const auto& t : tensors) {
      if (t.dtype() != dtype) continue;
      parts.push_back(t);
      total += t.numel();
    }
    if (total == 0) continue;
    Tensor flat = Tensor::uninitialized({total}, dtype, parts.front().place());
    kernels::pack_flat(parts, flat, 0);
    group_->process_group()->broadcast(flat, {.root = 0, .async_op = false})->wait();
    kernels::unpack_flat(flat, 0, parts);
  }
}

void GradSync::prepare_for_backward(const std::vector<Tensor>& outputs) {
  if (reducer_ && grad_need_sync_ && is_grad_enabled()) reducer_->prepare_for_backward(outputs);
}

std::string GradSync::done_key(int global_rank) const { return str_cat("done/", global_rank); }

void GradSync::check_peers_running() {
  const int me = get_rank();
  const int64_t my_steps = static_cast<int64_t>(reducer_->steps());
  for (int peer : group_->ranks()) {
    if (peer == me) continue;
    const std::string key = done_key(peer);
    if (!store_->check({key})) continue;
    const int64_t peer_steps = parse_steps(store_->get(key));
    if (peer_steps <= my_steps) {
      CREW_THROW(StateError, uneven_message(me, my_steps + 1, peer, peer_steps));
    }
  }
}

void GradSync::announce_done() {
  // The number of steps this rank started (a failing step counts), so a peer that is still
  // waiting in a later step sees that this rank will not join it.
  const int me = get_rank();
  const int64_t my_steps = static_cast<int64_t>(reducer_->prepared_steps());
  store_->set(done_key(me), std::to_string(my_steps));
  if (std::uncaught_exceptions() > 0) return;  // this rank is failing already; just tell the others
  Deadline deadline(options_.exit_check_timeout);
  for (int peer : group_->ranks()) {
    if (peer == me) continue;
    const std::string key = done_key(peer);
    while (!store_->check({key})) {
      if (deadline.expired()) return;  // a slow peer (e.g. still evaluating) is not an error
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    const int64_t peer_steps = parse_steps(store_->get(key));
    if (peer_steps != my_steps) {
      CREW_LOG(ERROR) << "DataParallel (rank " << me << "): this rank ran " << my_steps << " steps but rank "
                      << peer << " ran " << peer_steps
                      << ": the ranks ran different numbers of batches, so the gradients of the last steps "
                         "were never averaged. Use crew::io::DistributedBatchSampler, which gives every rank "
                         "the same number of batches.";
      std::fflush(nullptr);
      std::_Exit(1);
    }
  }
}

}  // namespace crew::dist
