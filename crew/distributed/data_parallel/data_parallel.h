#pragma once
// crew::DataParallel: Paddle's paddle.DataParallel. Wraps a layer so that every rank of the
// group trains the same model on its own share of the data, with gradients averaged over
// the group during backward. The Layer only forwards; the work is its crew::dist::GradSync
// (grad_sync.h, reducer.h, docs/data_parallel.md), which the Python DataParallel wraps too.
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
#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "crew/distributed/data_parallel/grad_sync.h"
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
  // DType::BFLOAT16 (or FLOAT16): float32 gradients are cast to it for the all_reduce and
  // averaged back in float32, halving the bytes sent (PyTorch DDP's bf16_compress_hook;
  // docs/data_parallel.md). nullopt: gradients sent in their own dtype (an O2 model's
  // bfloat16 gradients are sent as bfloat16 either way).
  std::optional<DType> comm_dtype;
  dist::Group* group = nullptr;  // nullptr = the default group
  // How long a finished rank waits at destruction for its peers to confirm the same step count.
  std::chrono::milliseconds exit_check_timeout{std::chrono::seconds(10)};
};

class DataParallel : public nn::Layer {
 public:
  explicit DataParallel(std::shared_ptr<nn::Layer> layer, DataParallelOptions options = {});

  Tensor forward(const Tensor& x) override;

  // While a guard lives, forward+backward accumulate gradients locally (no all_reduce).
  using NoSyncGuard = dist::GradSync::NoSyncGuard;
  NoSyncGuard no_sync() { return sync_->no_sync(); }
  // The flag no_sync() clears.
  bool grad_need_sync() const { return sync_->grad_need_sync(); }
  void set_grad_need_sync(bool sync) { sync_->set_grad_need_sync(sync); }

  // What forward() does after running the wrapped layer: arms the reducer for the backward
  // of `outputs` (GradSync::prepare_for_backward).
  void prepare_for_backward(const std::vector<Tensor>& outputs) { sync_->prepare_for_backward(outputs); }

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
  // The engine: broadcast, Reducer, no_sync, uneven-input check.
  dist::GradSync& grad_sync() { return *sync_; }
  // Null in a world of one process.
  const dist::Reducer* reducer() const { return sync_->reducer(); }
  int world_size() const { return sync_->world_size(); }

 private:
  std::shared_ptr<nn::Layer> layer_;
  std::unique_ptr<dist::GradSync> sync_;
};

}  // namespace crew
