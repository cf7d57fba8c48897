#pragma once
// crew::SyncBatchNorm: Paddle's paddle.nn.SyncBatchNorm. A BatchNorm2D whose training
// statistics are those of the whole data-parallel batch: forward all-reduces per channel
// [count, sum], then the sums of squared deviations from the global mean, so every rank
// normalises with the mean and biased variance of the concatenated batch (and updates the
// running statistics, Paddle's momentum 0.9, with them); backward all-reduces [sum g,
// sum g * xhat] per channel, so the input gradient is that of the global batch. Weight and
// bias gradients stay this rank's sums, which DataParallel then averages: ranks of N/W samples
// each with a mean loss train as one process over all N (tests/distributed/sync_batch_norm_test.cpp).
// Eval uses the running statistics and never communicates; before init_parallel_env or in a
// world of one process it is BatchNorm2D. Parameters and buffers as BatchNorm2D's (weight,
// bias, _mean, _variance), so checkpoints load into either.
//
//   crew::dist::init_parallel_env();
//   auto net = std::make_shared<ResNet>();                   // holds BatchNorm2D layers
//   crew::SyncBatchNorm::convert_sync_batchnorm(net);       // every one now synchronised
//   auto model = std::make_shared<crew::DataParallel>(net);
//   auto bn = std::make_shared<crew::SyncBatchNorm>(64);    // or one built directly
//
// Every rank must run the same synchronised layers in the same order (as for any
// collective); they share the group with DataParallel's gradient all_reduces, which is safe
// because every rank issues both in the same order.
#include <cstdint>
#include <memory>

#include "crew/distributed/parallel/parallel.h"
#include "crew/nn/batch_norm.h"

// Namespace crew, beside crew::DataParallel (Paddle's paddle.nn.SyncBatchNorm cannot live in
// crew::nn, which sits below crew/distributed).
namespace crew {

class SyncBatchNorm : public nn::BatchNorm2D {
 public:
  // group: the ranks to synchronise over, null = the default group.
  explicit SyncBatchNorm(int64_t num_features, double momentum = 0.9, double epsilon = 1e-5,
                         std::shared_ptr<dist::Group> group = nullptr);
  // x [N, C, ...], 2-D to 5-D (Paddle's SyncBatchNorm).
  Tensor forward(const Tensor& x) override;

  // Makes every BatchNorm2D of layer's tree (layer itself, its sublayers and, through a
  // DataParallel, the wrapped layer's) synchronise over group (null = the default group), and
  // returns layer. Unlike Paddle, which returns new SyncBatchNorm objects in the places of the
  // BatchNorm layers, this converts in place: crew layers hold their sublayers as typed
  // members, so the existing BatchNorm2D objects get the sync (set_stats_sync) and stay
  // BatchNorm2D (dynamic_cast to SyncBatchNorm fails); parameters, buffers and names do
  // not change.
  static std::shared_ptr<nn::Layer> convert_sync_batchnorm(std::shared_ptr<nn::Layer> layer,
                                                           std::shared_ptr<dist::Group> group = nullptr);
};

}  // namespace crew
