// ResNet-18 (Paddle's paddle.vision.models.resnet18) trained with Adam on
// CIFAR-10, data-parallel under `crew launch` (batch 32 per rank) or in one
// process.
//
//   bin/train_resnet --data-dir ~/cifar-10-binary.tar.gz --epochs 10 --augment
//   crew launch --devices=0,1 bin/train_resnet --synthetic 2048 --max-steps 50
//   --profile bin/train_resnet --synthetic 256 --init w.safetensors
//   --no-shuffle --metrics m.jsonl
//
// --synthetic N trains on N random 3x32x32 images (crew::io::FakeData) where no
// archive is at hand. ToTensor only by default; --augment adds RandomCrop(32,
// padding 4) and a horizontal flip. --sync-bn converts the BatchNorm layers to
// SyncBatchNorm (statistics over all ranks' batches). The shared options
// (--epochs --max-steps --lr --checkpoint-dir ...) are
// examples/trainer/flags.h's; images/s per epoch and at the end go to
// --metrics.
#include <CLI/CLI.hpp>
#include <iostream>

#include "crew/distributed/sync_batch_norm/sync_batch_norm.h"
#include "crew/io/io.h"
#include "crew/nn/models/resnet.h"
#include "crew/optim/adam.h"
#include "examples/trainer/train_loop.h"
#include "tools/cli_checks.h"

namespace {

struct ResNetFlags {
  std::string data_dir;
  int64_t synthetic = 0;
  bool augment = false;
  bool sync_bn = false;
};

std::shared_ptr<crew::io::Dataset> train_data(const ResNetFlags& r, uint64_t seed) {
  std::vector<crew::io::TransformPtr> tf;
  if (r.augment) {
    tf.push_back(std::make_shared<crew::io::RandomCrop>(32, 32, 4));
    tf.push_back(std::make_shared<crew::io::RandomHorizontalFlip>());
  }
  tf.push_back(std::make_shared<crew::io::ToTensor>());
  auto transform = crew::io::compose(tf);
  if (r.synthetic > 0) {
    return std::make_shared<crew::io::FakeData>(
        crew::io::FakeDataOptions{.size = r.synthetic, .seed = seed, .transform = transform});
  }
  return std::make_shared<crew::io::Cifar10>(
      crew::io::Cifar10Options{.mode = "train", .data_dir = r.data_dir, .transform = transform});
}

int run(const trainer::TrainFlags& f, const ResNetFlags& r) {
  trainer::Session session = trainer::start(f);
  auto data = train_data(r, f.seed);
  std::shared_ptr<crew::nn::Layer> net = crew::nn::models::resnet18(10);
  if (r.sync_bn) net = crew::SyncBatchNorm::convert_sync_batchnorm(net);
  auto schedule = trainer::make_schedule(f, trainer::planned_steps(f, *data));
  crew::optim::LearningRate lr =
      schedule ? crew::optim::LearningRate(schedule) : crew::optim::LearningRate(f.lr);
  auto opt = std::make_shared<crew::optim::Adam>(net->named_parameters(),
                                                 crew::optim::AdamOptions{.learning_rate = lr});
  trainer::TrainTask task{
      .program = "train_resnet", .net = net, .opt = opt, .schedule = schedule, .train = data};
  task.signature = {{"model", "resnet18"},
                    {"data", r.synthetic > 0 ? "synthetic-" + std::to_string(r.synthetic) : "cifar10"},
                    {"sync_bn", r.sync_bn ? "1" : "0"}};
  return trainer::train(f, session, task);
}

}  // namespace

int main(int argc, char** argv) {
  trainer::TrainFlags f;
  f.batch_size = 32;
  f.lr = 1e-3;
  ResNetFlags r;
  CLI::App app{
      "Train ResNet-18 with Adam on CIFAR-10 (or synthetic images), "
      "data-parallel under crew launch"};
  trainer::add_train_flags(app, f);
  app.add_option("--data-dir", r.data_dir, "CIFAR-10 binary archive (.tar.gz) or its directory");
  app.add_option("--synthetic", r.synthetic, "train on N random 3x32x32 images instead")
      ->check(crew::cli::above(r.synthetic, 0));
  app.add_flag("--augment", r.augment, "random crop (padding 4) and horizontal flip");
  app.add_flag("--sync-bn", r.sync_bn, "SyncBatchNorm: batch statistics over all ranks");
  if (auto rc = crew::cli::parse(app, argc, argv, "train_resnet")) return *rc;  // --help: 0; a usage error: 2
  if (!trainer::check_output_paths(f, "train_resnet")) return 2;
  try {
    return run(f, r);
  } catch (const std::exception& e) {
    std::cerr << "train_resnet: error: " << e.what() << std::endl;
    return 1;
  }
}
