#pragma once
// crew::DataParallel: Paddle's paddle.DataParallel. Wraps a layer so that every rank of the
// group trains the same model on its own share of the data, with gradients averaged over
// the group during backward (see crew/distributed/data_parallel/reducer.h and docs/data_parallel.md).
//
//   crew::dist::init_parallel_env();
//   auto model = std::make_shared<crew::DataParallel>(std::make_shared<MyNet>());
//   crew::optim::Adam opt(model->parameters(), {.learning_rate = 0.001});
//   for (auto& batch : loader) {                      // DistributedBatchSampler inside
//     Tensor loss = cross_entropy((*model)(batch[0]), batch[1]);
//     loss.backward();                                // all_reduces overlap backward
//     opt.step();
//     opt.clear_grad();
//   }
//   { auto guard = model->no_sync(); ... }          // accumulate locally, sync later
//
// At construction, every parameter and buffer is broadcast from rank 0 (one coalesced
// broadcast per dtype), so all ranks start equal. state_dict() has no wrapper prefix, so
// checkpoints load with or without DataParallel. In a world of one process DataParallel is a
// plain wrapper (with Paddle's warning). Ranks whose data run out at different steps are
// detected: every rank gets an error suggesting DistributedBatchSampler instead of a hang.
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "crew/distributed/data_parallel/reducer.h"
#include "crew/distributed/parallel/parallel.h"
#include "crew/nn/layer.h"

// Namespace crew, not crew::dist: Paddle spells it paddle.DataParallel (and PyTorch
// torch.nn.parallel.DistributedDataParallel), not paddle.distributed.DataParallel.
namespace crew {

struct DataParallelOptions {
  size_t comm_buffer_bytes = 25u << 20;  // bucket_bytes_cap (Paddle's comm_buffer_size, 25 MiB)
  // The bucket of the first parameters, reduced last: ReducerOptions::first_bucket_bytes
  // (Paddle's last_comm_buffer_size, 1 MiB).
  size_t last_comm_buffer_bytes = 1u << 20;
  bool find_unused_parameters = false;
  dist::Group* group = nullptr;  // nullptr = the default group
  // How long a finished rank waits at destruction for its peers to confirm the same step count.
  std::chrono::milliseconds exit_check_timeout{std::chrono::seconds(10)};
};

class DataParallel : public nn::Layer {
 public:
  explicit DataParallel(std::shared_ptr<nn::Layer> layer, DataParallelOptions options = {});
  ~DataParallel() override;

  Tensor forward(const Tensor& x) override;

  // While a guard lives, forward+backward accumulate gradients locally (no all_reduce).
  class NoSyncGuard {
   public:
    explicit NoSyncGuard(DataParallel& dp) : dp_(dp), previous_(dp.grad_need_sync_) {
      dp.grad_need_sync_ = false;
    }
    ~NoSyncGuard() { dp_.grad_need_sync_ = previous_; }
    NoSyncGuard(const NoSyncGuard&) = delete;
    NoSyncGuard& operator=(const NoSyncGuard&) = delete;

   private:
    DataParallel& dp_;
    bool previous_;
  };
  NoSyncGuard no_sync() { return NoSyncGuard(*this); }
  // The flag no_sync() clears, for bindings whose scope is not a C++ block (Python's
  // `with model.no_sync():`).
  bool grad_need_sync() const { return grad_need_sync_; }
  void set_grad_need_sync(bool sync) { grad_need_sync_ = sync; }

  // What forward() does after running the wrapped layer: arms the reducer for the backward
  // of `outputs`. For callers that run the wrapped computation themselves (the Python
  // DataParallel, whose layer's forward is Python). No-op in a world of one process, under
  // no_sync, or with gradients disabled.
  void prepare_for_backward(const std::vector<Tensor>& outputs);

  // The wrapped layer's, without a prefix.
  std::vector<Tensor> parameters(bool include_sublayers = true) const override {
    return layer_->parameters(include_sublayers);
  }
  std::vector<std::pair<std::string, Tensor>> named_parameters(const std::string& prefix = "",
                                                               bool include_sublayers = true) const override {
    return layer_->named_parameters(prefix, include_sublayers);
  }
  StateDict state_dict() const override { return layer_->state_dict(); }
  void set_state_dict(const StateDict& state, bool strict = true) override {
    layer_->set_state_dict(state, strict);
  }
  void train() override {
    Layer::train();
    layer_->train();
  }
  void eval() override {
    Layer::eval();
    layer_->eval();
  }

  nn::Layer& module() { return *layer_; }
  const std::shared_ptr<nn::Layer>& module_ptr() const { return layer_; }
  // Null in a world of one process.
  const dist::Reducer* reducer() const { return reducer_.get(); }
  int world_size() const { return world_size_; }

 private:
  void broadcast_state();
  void check_peers_running();
  void announce_done();

  std::shared_ptr<nn::Layer> layer_;
  DataParallelOptions options_;
  std::shared_ptr<dist::Group> group_holder_;
  dist::Group* group_ = nullptr;
  int world_size_ = 1;
  int id_ = 0;
  std::unique_ptr<dist::Reducer> reducer_;
  bool grad_need_sync_ = true;
};

}  // namespace crew
