#include "crew/distributed/data_parallel/data_parallel.h"

#include <atomic>
#include <cstdio>
#include <cstring>
#include <exception>
#include <thread>

#include "crew/autograd/autograd.h"
#include "crew/core/check.h"
#include "crew/core/logging.h"
#include "crew/core/parallel_env.h"
#include "crew/core/timer.h"
#include "crew/distributed/store/store.h"

namespace crew {
namespace {

std::atomic<int> next_dp_id{0};

std::string done_key(int id, int global_rank) {
  return "crew/dp/" + std::to_string(ParallelEnv::from_env().restart_count) + "/" + std::to_string(id) +
         "/done/" + std::to_string(global_rank);
}

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

DataParallel::DataParallel(std::shared_ptr<nn::Layer> layer, DataParallelOptions options)
    : nn::Layer("data_parallel"), layer_(std::move(layer)), options_(std::move(options)) {
  CREW_CHECK(layer_ != nullptr, "DataParallel: layer is null");
  id_ = next_dp_id.fetch_add(1);
  if (options_.group == nullptr && dist::get_world_size() <= 1) {
    CREW_LOG(WARNING)
        << "The program will return to single-card operation. Please check 1, whether you use "
           "spawn or crew launch to start the program. 2, Whether it is a multi-card program. 3, "
           "Is the current environment multi-card.";
    return;
  }
  CREW_CHECK_T(StateError, options_.group != nullptr || dist::is_initialized(), dist::kNotInitializedMessage);
  if (options_.group != nullptr) {
    group_ = options_.group;
  } else {
    group_holder_ = dist::default_group();
    group_ = group_holder_.get();
  }
  CREW_CHECK_T(StateError, group_->is_member(), "DataParallel: rank ", dist::get_rank(),
               " is not a member of group ", group_->name());
  world_size_ = group_->nranks();
  broadcast_state();
  if (world_size_ <= 1) return;

  std::vector<Tensor> params;
  std::vector<std::string> names;
  for (auto& [name, p] : layer_->named_parameters()) {
    if (p.stop_gradient()) continue;
    params.push_back(p);
    names.push_back(name);
  }
  dist::ReducerOptions ropts;
  ropts.bucket_bytes_cap = options_.comm_buffer_bytes;
  ropts.first_bucket_bytes = options_.last_comm_buffer_bytes;
  ropts.find_unused_parameters = options_.find_unused_parameters;
  ropts.on_slow_wait = [this] { check_peers_running(); };
  reducer_ = std::make_unique<dist::Reducer>(std::move(params), std::move(names), group_->process_group_ptr(),
                                             ropts);
}

void DataParallel::broadcast_state() {
  // Coalesced: one flat buffer per dtype for all parameters and buffers.
  std::vector<Tensor> tensors = layer_->parameters();
  for (auto& b : layer_->buffers()) tensors.push_back(b);
  for (DType dtype : {DType::FLOAT32, DType::FLOAT64, DType::INT32, DType::INT64, DType::UINT8}) {
    int64_t total = 0;
    for (auto& t : tensors)
      if (t.dtype() == dtype) total += t.numel();
    if (total == 0) continue;
    Tensor flat = Tensor::empty({total}, dtype);
    char* dst = static_cast<char*>(flat.raw_data());
    for (auto& t : tensors) {
      if (t.dtype() != dtype) continue;
      std::memcpy(dst, t.raw_data(), t.nbytes());
      dst += t.nbytes();
    }
    group_->process_group()->broadcast(flat, {.root = 0, .async_op = false})->wait();
    const char* src = static_cast<const char*>(flat.raw_data());
    for (auto& t : tensors) {
      if (t.dtype() != dtype) continue;
      std::memcpy(t.raw_data(), src, t.nbytes());
      src += t.nbytes();
    }
  }
}

Tensor DataParallel::forward(const Tensor& x) {
  Tensor out = layer_->forward(x);
  prepare_for_backward({out});
  return out;
}

void DataParallel::prepare_for_backward(const std::vector<Tensor>& outputs) {
  if (reducer_ && grad_need_sync_ && is_grad_enabled()) reducer_->prepare_for_backward(outputs);
}

void DataParallel::check_peers_running() {
  auto store = dist::global_store();
  const int me = dist::get_rank();
  const int64_t my_steps = static_cast<int64_t>(reducer_->steps());
  for (int peer : group_->ranks()) {
    if (peer == me) continue;
    const std::string key = done_key(id_, peer);
    if (!store->check({key})) continue;
    const int64_t peer_steps = parse_steps(store->get(key));
    if (peer_steps <= my_steps) {
      CREW_THROW(StateError, uneven_message(me, my_steps + 1, peer, peer_steps));
    }
  }
}

void DataParallel::announce_done() {
  // The number of steps this rank started (a failing step counts), so a peer that is still
  // waiting in a later step sees that this rank will not join it.
  auto store = dist::global_store();
  const int me = dist::get_rank();
  const int64_t my_steps = static_cast<int64_t>(reducer_->prepared_steps());
  store->set(done_key(id_, me), std::to_string(my_steps));
  if (std::uncaught_exceptions() > 0) return;  // this rank is failing already; just tell the others
  Deadline deadline(options_.exit_check_timeout);
  for (int peer : group_->ranks()) {
    if (peer == me) continue;
    const std::string key = done_key(id_, peer);
    while (!store->check({key})) {
      if (deadline.expired()) return;  // a slow peer (e.g. still evaluating) is not an error
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    const int64_t peer_steps = parse_steps(store->get(key));
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

DataParallel::~DataParallel() {
  if (!reducer_) return;
  try {
    if (dist::is_initialized()) announce_done();
  } catch (const std::exception& e) {
    CREW_LOG(WARNING) << "DataParallel: could not confirm the step count with the other ranks at exit: "
                      << e.what();
  }
}

}  // namespace crew
