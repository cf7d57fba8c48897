// The main job: the seed's CNN (MyNet) trained with Adam on Fashion-MNIST (or CIFAR-10),
// data-parallel under `crew launch` (DataParallel + DistributedBatchSampler, batch 32 per
// rank) or in one process when started alone, as in the seed's section 4.
//
//   crew launch --devices=0,1 bin/train_cnn --compare-single   # 2 ranks, then the speed-up
//   bin/train_cnn                                   # 10 epochs, batch 32, Adam lr 0.001
//   bin/train_cnn --max-steps 20 --epochs 1 --test-samples 500 --metrics m.jsonl
//   bin/train_cnn --dataset cifar10 --data-dir ~/cifar-10-binary.tar.gz --save ckpt
//
// Output: the seed's "epoch: 0, batch_id: 0, loss is: [2.4006782]" every 1000 batches, a
// progress bar per epoch (stderr), "epoch 0: test accuracy 0.8712 (10000 images), 2650
// images/s" after each epoch and "done: ..." at the end.
//
// Test accuracy is computed over the test split sharded across ranks without padding
// (DistributedBatchSamplerOptions::pad = false), so every test image counts exactly once.
// --compare-single: after training, rank 0 alone trains a fresh copy in one process (the
// others wait) for --compare-steps steps and prints the measured speed-up.
// --profile: where a step's time goes (compute, gradient communication wait, data wait).
//
// --save DIR writes DIR/model.safetensors and DIR/optimizer.safetensors (metadata:
// epochs_done, global_step) after every epoch, including one cut short by --max-steps.
// --resume DIR continues at epoch epochs_done; an epoch that was cut short is run again
// from its start (its shuffle depends only on the epoch number, as Paddle's sampler).
//
// --checkpoint-dir DIR --checkpoint-every N [--checkpoint-keep K]: restartable checkpoints
// (examples/train_cnn_checkpoint.h) after every N steps and at the end, the last K kept. A run
// started on a DIR holding a complete checkpoint resumes from the newest one mid-epoch (prints
// "resumed from DIR/step-N (epoch E, batch B)"), so `crew launch --max_restart 1` restarts a
// failed job where it was, and the per-step losses equal those of an uninterrupted run bit
// for bit: the weights' init, the shuffles (RandomState(epoch)) and the loader's augmentation
// seeds (seed + rank, pass = epoch) depend only on (seed, epoch, batch), and the generators'
// states are checkpointed too. SIGINT/SIGTERM then end the run after the step in progress with
// a checkpoint of it and exit code 128 + the signal.

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "crew/autograd/autograd.h"
#include "crew/core/parallel_env.h"
#include "crew/core/progress_bar.h"
#include "crew/core/timer.h"
#include "crew/distributed/collective/collective.h"
#include "crew/distributed/data_parallel/data_parallel.h"
#include "crew/distributed/parallel/parallel.h"
#include "crew/io/io.h"
#include "crew/nn/functional.h"
#include "crew/nn/models/my_net.h"
#include "crew/optim/adam.h"
#include "crew/tensor/device/device.h"
#include "crew/tensor/kernels/threading.h"
#include "crew/tensor/random.h"
#include "crew/tensor/safetensors.h"
#include "examples/train_cnn_checkpoint.h"
#include "examples/trainer/amp.h"
#include "examples/trainer/flags.h"
#include "examples/trainer/metrics.h"
#include "tools/cli_checks.h"

namespace {

struct TrainOptions {
  int epochs = 10;
  int64_t batch_size = 32;
  double lr = 0.001;
  int num_workers = 2;
  uint64_t seed = 1;
  int64_t max_steps = 0;  // 0: no limit
  bool no_shuffle = false;
  std::string dataset = "fashion-mnist";
  std::string data_dir;
  std::string init;                        // safetensors file with initial weights
  std::string save;                        // checkpoint directory
  std::string resume;                      // checkpoint directory to continue from
  train_cnn::CheckpointConfig checkpoint;  // --checkpoint-dir/-every/-keep
  std::string metrics;                     // JSON-lines file
  int64_t test_samples = 0;                // 0: the whole test split
  int threads = 0;                         // 0: crew's default (CREW_NUM_THREADS or all cores)
  double comm_buffer_mb = 25;              // DataParallel bucket cap (Paddle's comm_buffer_size)
  double last_comm_buffer_mb = 1;          // DataParallel first bucket (Paddle's last_comm_buffer_size)
  int64_t log_every = 1000;
  bool compare_single = false;
  int64_t compare_steps = 300;
  bool profile = false;
  std::string device = "cpu";  // Paddle's set_device: cpu, gpu, gpu:N
  trainer::AmpFlags amp;       // --amp, --amp-level (examples/trainer/amp.h)
};

struct Data {
  std::shared_ptr<crew::io::Dataset> train, test;
  int64_t channels = 1, image_size = 28;
};

Data load_data(const TrainOptions& o) {
  Data d;
  auto to_tensor = std::make_shared<crew::io::ToTensor>();
  if (o.dataset == "fashion-mnist" || o.dataset == "mnist") {
    crew::io::MnistOptions mo{.mode = "train", .data_dir = o.data_dir, .transform = to_tensor};
    if (o.dataset == "mnist") {
      d.train = std::make_shared<crew::io::MNIST>(mo);
      mo.mode = "test";
      d.test = std::make_shared<crew::io::MNIST>(mo);
    } else {
      d.train = std::make_shared<crew::io::FashionMNIST>(mo);
      mo.mode = "test";
      d.test = std::make_shared<crew::io::FashionMNIST>(mo);
    }
  } else {
    crew::io::Cifar10Options co{.mode = "train", .data_dir = o.data_dir, .transform = to_tensor};
    d.train = std::make_shared<crew::io::Cifar10>(co);
    co.mode = "test";
    d.test = std::make_shared<crew::io::Cifar10>(co);
    d.channels = 3;
    d.image_size = 32;
  }
  return d;
}

// The first n samples of a data set.
class Prefix : public crew::io::Dataset {
 public:
  Prefix(std::shared_ptr<crew::io::Dataset> base, int64_t n)
      : base_(std::move(base)), n_(std::min(n, base_->size())) {}
  int64_t size() const override { return n_; }
  crew::io::Sample get(int64_t i) const override {
    crew::io::check_sample_index("Prefix::get", i, n_);
    return base_->get(i);
  }

 private:
  std::shared_ptr<crew::io::Dataset> base_;
  int64_t n_;
};

using trainer::Metrics;
using trainer::short_float;

// Fraction of correctly classified test images, over every rank's unpadded shard.
double evaluate(crew::nn::models::MyNet& net, const std::shared_ptr<crew::io::Dataset>& test, int num_workers,
                int64_t* images, const crew::Place& place, const trainer::Amp& amp) {
  crew::NoGradGuard no_grad;
  auto autocast = amp.autocast();
  net.eval();
  auto shard = std::make_shared<crew::io::DistributedBatchSampler>(
      *test, 500, crew::io::DistributedBatchSamplerOptions{.pad = false});
  crew::io::DataLoader loader(test, shard, {.num_workers = num_workers});
  int64_t correct = 0, total = 0;
  for (auto& batch : loader) {
    crew::Tensor logits = net(batch[0].to(place)).cpu();
    if (logits.dtype() != crew::DType::FLOAT32) logits = logits.to(crew::DType::FLOAT32);  // --amp
    const int64_t n = logits.size(0), k = logits.size(1);
    const float* p = logits.data<float>();
    const int64_t* y = batch[1].data<int64_t>();
    for (int64_t i = 0; i < n; ++i) {
      int64_t best = 0;
      for (int64_t j = 1; j < k; ++j) best = p[i * k + j] > p[i * k + best] ? j : best;
      correct += best == y[i] ? 1 : 0;
    }
    total += n;
  }
  net.train();
  if (crew::dist::is_initialized()) {
    crew::Tensor counts = crew::Tensor::from_vector<int64_t>({correct, total});
    crew::dist::all_reduce(counts);
    correct = counts.data<int64_t>()[0];
    total = counts.data<int64_t>()[1];
  }
  *images = total;
  return total ? static_cast<double>(correct) / static_cast<double>(total) : 0.0;
}

void save_checkpoint(const std::string& dir, crew::nn::models::MyNet& net, crew::optim::Adam& opt,
                     int epochs_done, int64_t global_step) {
  std::filesystem::create_directories(dir);
  std::map<std::string, std::string> meta = {{"epochs_done", std::to_string(epochs_done)},
                                             {"global_step", std::to_string(global_step)}};
  crew::save(net.state_dict(), dir + "/model.safetensors", meta);
  crew::save(opt.state_dict(), dir + "/optimizer.safetensors", meta);
}

// Where a step's time went, summed over the run (rank 0's view).
struct Profile {
  double data_wait = 0, step = 0;
  int64_t steps = 0;
};

// One process training a fresh copy of the net for `steps` steps on this rank's share of the
// data loader settings: images/s after a short warm-up.
double single_process_rate(const TrainOptions& o, const Data& data) {
  auto net = std::make_shared<crew::nn::models::MyNet>(10, data.channels, data.image_size);
  crew::optim::Adam opt(net->parameters(), {.learning_rate = o.lr});
  auto sampler = std::make_shared<crew::io::BatchSampler>(*data.train, o.batch_size, !o.no_shuffle, true);
  crew::io::DataLoader loader(data.train, sampler, {.num_workers = o.num_workers, .seed = o.seed});
  const int64_t warmup = 20;
  int64_t step = 0, images = 0;
  crew::Stopwatch watch;
  for (auto& batch : loader) {
    if (step == warmup) {
      watch.reset();
      images = 0;
    }
    crew::Tensor loss = crew::nn::functional::cross_entropy((*net)(batch[0]), batch[1]);
    loss.backward();
    opt.step();
    opt.clear_grad();
    images += batch[0].size(0);
    if (++step >= warmup + o.compare_steps) break;
  }
  return images / watch.seconds();
}

// Where a run starts: fresh, after --resume DIR (an epoch boundary) or from the newest
// --checkpoint-dir checkpoint (mid-epoch).
struct StartPoint {
  int epoch = 0;
  int64_t global_step = 0, batch = 0;
  std::optional<train_cnn::Resumed> resumed;
};

StartPoint restore(const TrainOptions& o, crew::nn::models::MyNet& net, crew::optim::Adam& opt,
                   const train_cnn::Signature& signature, int rank, int world) {
  StartPoint s;
  if (!o.resume.empty()) {
    net.set_state_dict(crew::load(o.resume + "/model.safetensors"));
    opt.set_state_dict(crew::load(o.resume + "/optimizer.safetensors"));
    auto meta = crew::load_metadata(o.resume + "/model.safetensors");
    s.epoch = std::stoi(meta.at("epochs_done"));
    s.global_step = std::stoll(meta.at("global_step"));
    if (rank == 0)
      std::cout << "resumed from " << o.resume << ": " << s.epoch << " epochs, step " << s.global_step << std::endl;
  }
  if (!o.checkpoint.dir.empty()) s.resumed = train_cnn::resume(o.checkpoint, net, opt, signature, rank, world);
  if (s.resumed) {
    s.global_step = s.resumed->position.global_step;
    s.epoch = static_cast<int>(s.resumed->position.epoch);
    s.batch = s.resumed->position.batch;
    if (rank == 0) {
      std::cout << "resumed from " << s.resumed->path << " (epoch " << s.epoch << ", batch " << s.batch << ")"
                << std::endl;
    }
  }
  return s;
}

// --profile: rank 0's split of a step's time, then every rank's (so that a rank that computes
// slower, and makes the others wait in the all_reduce, shows up by number).
void report_profile(const Profile& prof, const crew::DataParallel* dp, int world, bool chief) {
  const double comm = dp && dp->reducer() ? dp->reducer()->total_comm_wait_seconds() : 0.0;
  const double total = prof.step + prof.data_wait;
  const double compute = prof.step - comm;
  auto ms = [&](double s) { return 1000.0 * s / static_cast<double>(prof.steps); };
  std::vector<crew::Tensor> per_rank;
  if (world > 1) {
    auto mine = crew::Tensor::from_vector(std::vector<float>{
        static_cast<float>(ms(compute)), static_cast<float>(ms(comm)), static_cast<float>(ms(prof.data_wait))});
    crew::dist::all_gather(per_rank, mine);
  }
  if (!chief) return;
  char line[300];
  std::snprintf(line, sizeof line,
                "profile (rank 0, %lld steps): step %.2f ms = compute %.2f ms (%.1f%%) + gradient communication "
                "wait %.2f ms (%.1f%%) + data wait %.2f ms (%.1f%%)",
                static_cast<long long>(prof.steps), ms(total), ms(compute), 100 * compute / total, ms(comm),
                100 * comm / total, ms(prof.data_wait), 100 * prof.data_wait / total);
  std::cout << line << std::endl;
  if (per_rank.empty()) return;
  std::cout << "profile per rank (compute / communication wait / data wait, ms per step):";
  for (size_t r = 0; r < per_rank.size(); ++r) {
    const float* v = per_rank[r].data<float>();
    std::snprintf(line, sizeof line, "%s rank %zu %.2f / %.2f / %.2f", r ? "," : "", r, v[0], v[1], v[2]);
    std::cout << line;
  }
  std::cout << std::endl;
}

// --compare-single: rank 0 measures one process on its own share of the machine while the
// others wait, and prints the speed-up of `rate` (all ranks' images/s) over it.
void report_speedup(const TrainOptions& o, const Data& data, double rate, int world, bool chief) {
  double single = 0;
  if (chief) single = single_process_rate(o, data);
  if (world > 1) crew::dist::barrier();
  if (!chief) return;
  char line[200];
  std::snprintf(line, sizeof line, "speed-up: %d ranks %.0f images/s vs 1 process %.0f images/s: %.2fx", world,
                rate, single, single > 0 ? rate / single : 0.0);
  std::cout << line << std::endl;
}

// One training run: the model, its optimizer and loader, and what its epochs share.
class CnnRun {
 public:
  explicit CnnRun(const TrainOptions& o);
  int run();

 private:
  bool train_epoch(int epoch);  // false: stopped by a signal
  void step(const std::vector<crew::Tensor>& batch, int epoch, int64_t batch_id);
  void checkpoint(int epoch, int64_t next_batch, bool force);
  void end_epoch(int epoch, double seconds, int64_t images, int64_t steps);
  int finish();

  const TrainOptions& o_;
  int rank_, world_;
  bool chief_;
  Data data_;
  std::shared_ptr<crew::io::Dataset> test_;
  std::shared_ptr<crew::nn::models::MyNet> net_;
  std::unique_ptr<crew::optim::Adam> opt_;
  std::unique_ptr<trainer::Amp> amp_;
  train_cnn::Signature signature_;
  StartPoint start_;
  crew::Place place_;
  std::shared_ptr<crew::DataParallel> dp_;
  crew::nn::Layer* model_ = nullptr;
  std::shared_ptr<crew::io::DistributedBatchSampler> sampler_;
  std::unique_ptr<crew::io::DataLoader> loader_;
  std::unique_ptr<Metrics> metrics_;
  crew::ProgressBar* bar_ = nullptr;
  // What the epochs share.
  int64_t global_step_ = 0, checkpointed_step_ = -1, steps_this_run_ = 0, train_images_ = 0;
  int64_t max_steps_from_ = 0;  // --max-steps counts from here (0 with --checkpoint-dir)
  double train_seconds_ = 0, accuracy_ = 0, epoch_loss_sum_ = 0;
  int epochs_done_ = 0, epochs_run_ = 0;
  bool stop_ = false;
  int stop_signal_ = 0;  // SIGINT/SIGTERM with --checkpoint-dir: checkpoint this step, exit 128 + it
  Profile prof_;
  crew::Stopwatch total_watch_;
};

CnnRun::CnnRun(const TrainOptions& o) : o_(o) {
  if (o.threads > 0) crew::set_num_threads(o.threads);
  if (!o.checkpoint.dir.empty()) train_cnn::install_stop_handlers();
  if (crew::ParallelEnv::from_env().world_size > 1) crew::dist::init_parallel_env();
  rank_ = crew::dist::get_rank();
  world_ = crew::dist::get_world_size();
  chief_ = rank_ == 0;
  crew::seed(o.seed);
  data_ = load_data(o);
  test_ = o.test_samples > 0 ? std::make_shared<Prefix>(data_.test, o.test_samples) : data_.test;
  net_ = std::make_shared<crew::nn::models::MyNet>(10, data_.channels, data_.image_size);
  if (!o.init.empty()) net_->set_state_dict(crew::load(o.init));
  opt_ = std::make_unique<crew::optim::Adam>(net_->named_parameters(), crew::optim::AdamOptions{.learning_rate = o.lr});
  amp_ = std::make_unique<trainer::Amp>(o.amp, *net_, *opt_);  // O2 converts the parameters: before loading
  signature_ = {{"world_size", std::to_string(world_)},
                {"batch_size", std::to_string(o.batch_size)},
                {"seed", std::to_string(o.seed)},
                {"dataset", o.dataset},
                {"shuffle", o.no_shuffle ? "0" : "1"}};
  start_ = restore(o, *net_, *opt_, signature_, rank_, world_);
  global_step_ = start_.global_step;
  epochs_done_ = start_.epoch;
  if (start_.resumed) checkpointed_step_ = global_step_;
  max_steps_from_ = o.checkpoint.dir.empty() ? global_step_ : 0;  // a restarted job stops where the first would
  stop_ = o.max_steps > 0 && global_step_ - max_steps_from_ >= o.max_steps;
}

int CnnRun::run() {
  // --device gpu: parameters, batches and the optimizer's state on the GPU ("gpu": the rank's
  // own, FLAGS_selected_gpus; ranks sharing one GPU name it, "gpu:0", and their collectives are
  // staged through host memory).
  place_ = crew::set_device(o_.device);
  if (place_.type != crew::DeviceType::CPU) {
    if (!o_.resume.empty() || !o_.checkpoint.dir.empty())
      throw crew::ValueError("train_cnn: --device " + o_.device +
                             " trains from fresh weights (no --resume or --checkpoint-dir yet)");
    net_->to(place_);
  }
  // Data-parallel when there is more than one rank: parameters broadcast from rank 0 here,
  // gradients averaged during backward.
  model_ = net_.get();
  if (world_ > 1) {
    crew::DataParallelOptions dpo;
    dpo.comm_buffer_bytes = static_cast<size_t>(o_.comm_buffer_mb * (1 << 20));
    dpo.last_comm_buffer_bytes = static_cast<size_t>(o_.last_comm_buffer_mb * (1 << 20));
    dp_ = std::make_shared<crew::DataParallel>(net_, dpo);
    model_ = dp_.get();
  }
  if (chief_) {
    std::cout << "train_cnn: " << o_.dataset << ", " << world_ << (world_ > 1 ? " ranks" : " process") << " x "
              << crew::get_num_threads() << " thread(s), batch " << o_.batch_size << " per rank";
    if (place_.type != crew::DeviceType::CPU) std::cout << ", on " << place_.to_string();
    std::cout << ", " << amp_->describe() << std::endl;
  }
  // The seed's sampler: this rank's share, shuffled with NumPy's RandomState(epoch) as Paddle does.
  sampler_ = std::make_shared<crew::io::DistributedBatchSampler>(
      *data_.train, o_.batch_size, crew::io::DistributedBatchSamplerOptions{.shuffle = !o_.no_shuffle});
  loader_ = std::make_unique<crew::io::DataLoader>(data_.train, sampler_,
                                                   crew::io::DataLoaderOptions{.num_workers = o_.num_workers,
                                                                               .seed = o_.seed + rank_});
  metrics_ = std::make_unique<Metrics>(chief_ ? o_.metrics : std::string(), "train_cnn");
  if (start_.resumed) {
    metrics_->line(crew::str_cat("{\"type\": \"resume\", \"step\": ", global_step_, ", \"epoch\": ", start_.epoch,
                                 ", \"batch\": ", start_.batch, "}"));
  }
  total_watch_.reset();
  for (int epoch = start_.epoch; epoch < o_.epochs && !stop_; ++epoch) {
    if (!train_epoch(epoch)) break;
  }
  return finish();
}

// After a step: the position of the next one, written when due (or forced at the end).
void CnnRun::checkpoint(int epoch, int64_t next_batch, bool force) {
  if (o_.checkpoint.dir.empty() || checkpointed_step_ == global_step_) return;
  if (!force && (o_.checkpoint.every_steps <= 0 || global_step_ % o_.checkpoint.every_steps != 0)) return;
  train_cnn::Position pos{global_step_, epoch, next_batch};
  if (next_batch >= loader_->size()) pos = {global_step_, epoch + 1, 0};
  train_cnn::write_checkpoint(o_.checkpoint, *net_, *opt_, pos, signature_, rank_, world_);
  checkpointed_step_ = global_step_;
}

void CnnRun::step(const std::vector<crew::Tensor>& batch, int epoch, int64_t batch_id) {
  crew::Stopwatch step_watch;
  crew::Tensor loss;
  {
    auto autocast = amp_->autocast();  // forward and loss; backward runs with autocast off
    loss = crew::nn::functional::cross_entropy((*model_)(batch[0].to(place_)), batch[1].to(place_));
  }
  amp_->backward(loss);
  amp_->step(*opt_);
  opt_->clear_grad();
  prof_.step += step_watch.seconds();
  ++prof_.steps;
  const float loss_value = static_cast<float>(loss.item());
  if (chief_ && batch_id % o_.log_every == 0) {
    bar_->write(crew::str_cat("epoch: ", epoch, ", batch_id: ", batch_id, ", loss is: [", short_float(loss_value),
                              "]"));
  }
  metrics_->line(crew::str_cat("{\"type\": \"step\", \"epoch\": ", epoch, ", \"step\": ", global_step_,
                               ", \"loss\": ", short_float(loss_value), ", \"lr\": ", opt_->get_lr(), "}"));
  epoch_loss_sum_ += loss_value;  // the bar shows this run's mean over the epoch, as tqdm users log it
  char postfix[48];
  const int64_t first_batch = epoch == start_.epoch ? start_.batch : 0;
  std::snprintf(postfix, sizeof postfix, "loss=%.4f, mean=%.4f", loss_value,
                epoch_loss_sum_ / static_cast<double>(batch_id - first_batch + 1));
  bar_->set_postfix(postfix);
  bar_->update();
}

bool CnnRun::train_epoch(int epoch) {
  sampler_->set_epoch(epoch);
  // Pass number = epoch (the augmentation seeds'), skipping the batches done before a resume.
  const int64_t first_batch = epoch == start_.epoch ? start_.batch : 0;
  loader_->resume_at(static_cast<uint64_t>(epoch), first_batch);
  ++epochs_run_;
  crew::ProgressBar bar(loader_->size(), {.desc = "epoch " + std::to_string(epoch), .initial = first_batch});
  bar_ = &bar;
  crew::Stopwatch epoch_watch;
  int64_t epoch_images = 0, batch_id = first_batch;
  epoch_loss_sum_ = 0;
  crew::Stopwatch wait_watch;
  for (auto& batch : *loader_) {
    train_cnn::maybe_inject_fault(global_step_, rank_, world_);
    prof_.data_wait += wait_watch.seconds();
    step(batch, epoch, batch_id);
    epoch_images += batch[0].size(0) * world_;
    ++batch_id;
    ++global_step_;
    ++steps_this_run_;
    stop_ = o_.max_steps > 0 && global_step_ - max_steps_from_ >= o_.max_steps;
    checkpoint(epoch, batch_id, stop_ || (epoch + 1 == o_.epochs && batch_id == loader_->size()));
    if (!o_.checkpoint.dir.empty()) stop_signal_ = train_cnn::agreed_stop_signal(world_);
    if (stop_signal_) checkpoint(epoch, batch_id, true);
    if (stop_ || stop_signal_) break;
    wait_watch.reset();
  }
  bar.close();
  bar_ = nullptr;
  if (stop_signal_) return false;
  end_epoch(epoch, epoch_watch.seconds(), epoch_images, batch_id);
  return true;
}

// The epoch's test accuracy and rate, printed and logged; --save's checkpoint.
void CnnRun::end_epoch(int epoch, double seconds, int64_t images, int64_t steps) {
  train_seconds_ += seconds;
  train_images_ += images;
  int64_t tested = 0;
  accuracy_ = evaluate(*net_, test_, o_.num_workers, &tested, place_, *amp_);
  const double rate = seconds > 0 ? images / seconds : 0.0;
  if (chief_) {
    char line[160];
    std::snprintf(line, sizeof line, "epoch %d: test accuracy %.4f (%lld images), %.0f images/s", epoch,
                  accuracy_, static_cast<long long>(tested), rate);
    std::cout << line << std::endl;
  }
  metrics_->line(crew::str_cat("{\"type\": \"epoch\", \"epoch\": ", epoch, ", \"steps\": ", steps,
                               ", \"test_accuracy\": ", accuracy_, ", \"test_images\": ", tested,
                               ", \"images_per_s\": ", rate, ", \"train_seconds\": ", seconds, "}"));
  if (!stop_) epochs_done_ = epoch + 1;
  if (chief_ && !o_.save.empty()) save_checkpoint(o_.save, *net_, *opt_, epochs_done_, global_step_);
}

int CnnRun::finish() {
  if (stop_signal_) {
    if (chief_) {
      std::cout << "train_cnn: stopped by " << train_cnn::signal_name(stop_signal_) << " after step "
                << global_step_ << ", checkpoint " << o_.checkpoint.dir << "/"
                << crew::checkpoint_dir_name(global_step_) << " written" << std::endl;
    }
    return 128 + stop_signal_;
  }
  if (epochs_run_ == 0) {  // resumed from a finished run: nothing left to train
    int64_t tested = 0;
    accuracy_ = evaluate(*net_, test_, o_.num_workers, &tested, place_, *amp_);
  }
  const double rate = train_seconds_ > 0 ? train_images_ / train_seconds_ : 0.0;
  if (chief_) {
    char done[220];
    std::snprintf(done, sizeof done, "done: %d epochs, %.1f s, %.0f images/s, final test accuracy %.4f",
                  epochs_run_, total_watch_.seconds(), rate, accuracy_);
    std::cout << done;
    if (stop_) std::cout << " (stopped by --max-steps after " << steps_this_run_ << " steps)";
    std::cout << std::endl;
  }
  if (o_.profile && prof_.steps > 0) report_profile(prof_, dp_.get(), world_, chief_);
  if (o_.compare_single) report_speedup(o_, data_, rate, world_, chief_);
  return 0;
}

bool check_output_paths(const TrainOptions& o) {
  const std::pair<const char*, const std::string*> dirs[] = {{"--checkpoint-dir", &o.checkpoint.dir},
                                                             {"--save", &o.save}};
  bool ok = true;
  for (const auto& [flag, dir] : dirs) {
    const std::string why = dir->empty() ? "" : trainer::directory_problem(*dir);
    if (!why.empty()) std::cerr << "train_cnn: " << flag << " " << *dir << ": " << why << std::endl;
    ok = ok && why.empty();
  }
  const std::string why = o.metrics.empty() ? "" : trainer::file_problem(o.metrics);
  if (!why.empty()) std::cerr << "train_cnn: --metrics " << o.metrics << ": " << why << std::endl;
  return ok && why.empty();
}

}  // namespace

int main(int argc, char** argv) {
  TrainOptions o;
  CLI::App app{"Train the seed's CNN (MyNet) with Adam on Fashion-MNIST or CIFAR-10"};
  app.add_option("--epochs", o.epochs, "epochs")->check(crew::cli::at_least(o.epochs, 0));
  app.add_option("--batch-size", o.batch_size, "batch size")->check(crew::cli::above(o.batch_size, 0));
  app.add_option("--lr", o.lr, "Adam learning rate")->check(crew::cli::above(o.lr, 0));
  app.add_option("--num-workers", o.num_workers, "DataLoader worker threads")
      ->check(crew::cli::at_least(o.num_workers, 0));
  app.add_option("--seed", o.seed, "random seed (weights, augmentation)")
      ->check(crew::cli::any_value(o.seed));
  app.add_option("--max-steps", o.max_steps,
                 "stop after N training steps in this run (with --checkpoint-dir: in all runs; 0: no limit)")
      ->check(crew::cli::at_least(o.max_steps, 0));
  app.add_flag("--no-shuffle", o.no_shuffle, "keep the data set order");
  app.add_option("--dataset", o.dataset, "fashion-mnist, mnist or cifar10")
      ->check(CLI::IsMember({"fashion-mnist", "mnist", "cifar10"}));
  app.add_option("--data-dir", o.data_dir, "data set directory (or the CIFAR-10 .tar.gz)");
  app.add_option("--init", o.init, "initial weights (safetensors, keys as in state_dict())");
  app.add_option("--save", o.save, "checkpoint directory (written after each epoch and at the end)");
  app.add_option("--resume", o.resume, "continue from a --save directory");
  app.add_option("--metrics", o.metrics, "append JSON lines (one per step, one per epoch) to FILE");
  app.add_option("--test-samples", o.test_samples, "evaluate on the first N test images (0: all)")
      ->check(crew::cli::at_least(o.test_samples, 0));
  app.add_option("--threads", o.threads, "compute threads (0: CREW_NUM_THREADS or all cores)")
      ->check(crew::cli::at_least(o.threads, 0));
  app.add_option("--comm-buffer-size", o.comm_buffer_mb,
                 "DataParallel bucket cap in MiB (Paddle's comm_buffer_size)")
      ->check(crew::cli::above(o.comm_buffer_mb, 0));
  app.add_option("--last-comm-buffer-size", o.last_comm_buffer_mb,
                 "DataParallel first bucket in MiB (Paddle's last_comm_buffer_size)")
      ->check(crew::cli::above(o.last_comm_buffer_mb, 0));
  app.add_option("--log-every", o.log_every, "print the loss line every N batches")
      ->check(crew::cli::above(o.log_every, 0));
  app.add_flag("--compare-single", o.compare_single,
               "after training, measure one process and print the speed-up");
  app.add_option("--compare-steps", o.compare_steps, "steps of the one-process measurement")
      ->check(crew::cli::above(o.compare_steps, 0));
  app.add_flag("--profile", o.profile,
               "print where a step's time goes (compute, communication wait, data wait)");
  auto* ckpt_dir =
      app.add_option("--checkpoint-dir", o.checkpoint.dir,
                     "restartable checkpoints: resume from the newest complete one in DIR, write new ones");
  app.add_option("--checkpoint-every", o.checkpoint.every_steps,
                 "write a checkpoint after every N steps (and at the end; 0: only at the end)")
      ->check(crew::cli::at_least(o.checkpoint.every_steps, 0));
  app.add_option("--checkpoint-keep", o.checkpoint.keep, "checkpoints kept in --checkpoint-dir")
      ->check(crew::cli::above(o.checkpoint.keep, 0));
  app.add_option("--device", o.device, "cpu, gpu or gpu:N (Paddle's set_device; gpu: the rank's own GPU)")
      ->capture_default_str();
  app.add_flag("--checkpoint-start-fresh", o.checkpoint.start_fresh,
               "when no checkpoint in --checkpoint-dir verifies, train from step 0 instead of stopping");
  // Two ways of checkpointing, one per run: --save/--resume per epoch, --checkpoint-dir per N steps.
  trainer::add_amp_flags(app, o.amp);
  ckpt_dir->excludes("--resume");
  ckpt_dir->excludes("--save");
  if (auto rc = crew::cli::parse(app, argc, argv, "train_cnn")) return *rc;  // --help: 0; a usage error: 2
  if (!check_output_paths(o)) return 2;
  try {
    return CnnRun(o).run();
  } catch (const std::exception& e) {
    std::cerr << "train_cnn: error: " << e.what() << std::endl;
    return 1;
  }
}
