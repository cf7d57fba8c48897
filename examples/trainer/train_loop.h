#pragma once
// The training loop train_resnet and train_gpt share: data-parallel under `crew launch`
// (DataParallel + DistributedBatchSampler, --batch-size per rank), one process otherwise.
// Per step: loss = task.loss(model, batch), backward (gradients averaged across ranks during
// backward), optimizer step, schedule step. Prints the seed-style loss line every --log-every
// steps and a progress bar per epoch; writes JSON lines to --metrics (rank 0):
//   {"type": "step", "epoch": e, "step": s, "loss": x, "lr": y}   (x: rank 0's batch; on several
//      ranks also "global_loss": the mean over ranks, one float all_reduce per step)
//   {"type": "epoch", "epoch": e, "steps": n, "<unit>_per_s": r, "train_seconds": t}
//   {"type": "done", "steps": n, "<unit>_per_s": r, "peak_rss_mb": m}
// The rate counts every rank's samples x task.units_per_sample over the steps after the
// first --warmup-rate-steps (5) of the run; peak_rss_mb is the largest rank's peak RSS.
// --checkpoint-dir makes the run restartable exactly as train_cnn's (train_cnn_checkpoint.h).
//
//   trainer::Session session = trainer::start(flags);      // threads, process group, seed
//   auto net = ...; auto opt = ...;                         // built after start()
//   return trainer::train(flags, {.program = "train_gpt", .net = net, .opt = opt, ...});
#include <functional>
#include <memory>
#include <string>

#include "crew/io/collate.h"
#include "crew/io/dataset.h"
#include "crew/nn/layer.h"
#include "crew/optim/lr_scheduler.h"
#include "crew/optim/optimizer.h"
#include "examples/trainer/flags.h"

namespace trainer {

struct Session {
  int rank = 0;
  int world = 1;
};

// Sets the thread count, joins the job's process group when launched with several ranks,
// seeds the default generator with flags.seed (so the model built next is the same on every
// rank), installs the stop handlers when checkpointing.
Session start(const TrainFlags& flags);

// Steps the loop will run: min(--max-steps, epochs x this rank's batches per epoch), for
// schedules; call after start() (the sampler reads the rank and world size).
int64_t planned_steps(const TrainFlags& flags, const crew::io::Dataset& data);
// --lr-schedule: null for a constant rate without warm-up; else LinearWarmup(warmup_steps,
// 0 -> lr) then the constant rate or CosineAnnealingDecay(lr, total - warmup) down to 0.
std::shared_ptr<crew::optim::LRScheduler> make_schedule(const TrainFlags& flags, int64_t total_steps);

struct TrainTask {
  std::string program;  // names the output ("train_gpt: ...")
  std::shared_ptr<crew::nn::Layer> net;
  std::shared_ptr<crew::optim::Optimizer> opt;
  std::shared_ptr<crew::optim::LRScheduler> schedule;  // stepped once per step; may be null
  std::shared_ptr<crew::io::Dataset> train;
  // Loss of one batch; `model` is the DataParallel wrapper when there are several ranks.
  std::function<crew::Tensor(crew::nn::Layer& model, const crew::io::Batch& batch)> loss;
  int64_t units_per_sample = 1;  // 1 for images, block size for tokens
  std::string unit = "images";
  train_cnn::Signature signature;  // extra entries a checkpoint must agree on (model sizes, ...)
};

// Runs the loop; returns the process exit code (0, or 128 + signal when stopped by one).
int train(const TrainFlags& flags, const Session& session, TrainTask& task);

}  // namespace trainer
