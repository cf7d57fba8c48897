#include "examples/trainer/train_loop.h"

#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <optional>

#include "crew/autograd/autograd.h"
#include "crew/core/parallel_env.h"
#include "crew/core/progress_bar.h"
#include "crew/core/timer.h"
#include "crew/distributed/collective/collective.h"
#include "crew/distributed/data_parallel/data_parallel.h"
#include "crew/distributed/parallel/parallel.h"
#include "crew/io/dataloader.h"
#include "crew/tensor/device/device.h"
#include "crew/io/distributed_batch_sampler.h"
#include "crew/nn/functional.h"
#include "crew/optim/lr_decay.h"
#include "crew/tensor/kernels/threading.h"
#include "crew/tensor/random.h"
#include "crew/tensor/safetensors.h"
#include "examples/trainer/metrics.h"

namespace trainer {

Session start(const TrainFlags& f) {
  if (f.threads > 0) crew::set_num_threads(f.threads);
  if (!f.checkpoint.dir.empty()) train_cnn::install_stop_handlers();
  if (crew::ParallelEnv::from_env().world_size > 1) crew::dist::init_parallel_env();
  crew::seed(f.seed);
  return {crew::dist::get_rank(), crew::dist::get_world_size()};
}

int64_t planned_steps(const TrainFlags& f, const crew::io::Dataset& data) {
  // Batches per epoch as the loop's sampler counts them (this rank's share, padded).
  const crew::io::DistributedBatchSampler sampler(data, f.batch_size);
  int64_t total = std::max<int64_t>(1, sampler.size()) * f.epochs;
  if (f.max_steps > 0) total = std::min(total, f.max_steps);
  return std::max<int64_t>(1, total);
}

std::shared_ptr<crew::optim::LRScheduler> make_schedule(const TrainFlags& f, int64_t total_steps) {
  std::shared_ptr<crew::optim::LRScheduler> after;
  if (f.lr_schedule == "cosine") {
    after = std::make_shared<crew::optim::CosineAnnealingDecay>(
        f.lr, std::max<int64_t>(1, total_steps - f.warmup_steps), 0.0);
  }
  if (f.warmup_steps == 0) return after;
  if (after) return std::make_shared<crew::optim::LinearWarmup>(after, f.warmup_steps, 0.0, f.lr);
  return std::make_shared<crew::optim::LinearWarmup>(f.lr, f.warmup_steps, 0.0, f.lr);
}

namespace {

double peak_rss_mb() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;  // Linux: KiB
}

// Where the steps' time went (this rank).
struct Profile {
  double data_wait = 0, step = 0;
  int64_t steps = 0;
};

class Loop {
 public:
  Loop(const TrainFlags& f, const Session& s, TrainTask& t)
      : f_(f), s_(s), t_(t), metrics_(s.rank == 0 ? f.metrics : "", t.program) {}
  int run();

 private:
  void resume();
  void build_loader();
  bool run_epoch(int epoch);  // false: stop
  void step(const crew::io::Batch& batch, int epoch, int64_t batch_id, crew::ProgressBar& bar);
  // Fields the loader left elsewhere (to() keeps those already on place_).
  crew::io::Batch on_device(const crew::io::Batch& batch) const {
    crew::io::Batch out;
    for (const auto& t : batch) out.push_back(t.to(place_));
    return out;
  }
  void checkpoint(int epoch, int64_t next_batch, bool force);
  void report(double rate);
  bool chief() const { return s_.rank == 0; }

  const TrainFlags& f_;
  const Session& s_;
  TrainTask& t_;
  Metrics metrics_;
  std::optional<Amp> amp_;
  std::shared_ptr<crew::DataParallel> dp_;
  crew::nn::Layer* model_ = nullptr;
  std::shared_ptr<crew::io::DistributedBatchSampler> sampler_;
  std::optional<crew::io::DataLoader> loader_;
  crew::Place place_;  // --device
  int start_epoch_ = 0;
  int64_t global_step_ = 0, start_batch_ = 0, checkpointed_step_ = -1, steps_run_ = 0, max_steps_from_ = 0;
  int stop_signal_ = 0;
  bool stop_ = false;
  // The rate: wall time and samples after the first f_.warmup_rate_steps steps of this run.
  crew::Stopwatch rate_watch_;
  int64_t rate_samples_ = 0;
  Profile prof_;
};

void Loop::resume() {
  if (!f_.init.empty()) t_.net->set_state_dict(crew::load(f_.init));
  if (f_.checkpoint.dir.empty()) return;
  auto resumed = train_cnn::resume(f_.checkpoint, *t_.net, *t_.opt, t_.signature, s_.rank, s_.world);
  if (!resumed) return;
  global_step_ = checkpointed_step_ = resumed->position.global_step;
  start_epoch_ = static_cast<int>(resumed->position.epoch);
  start_batch_ = resumed->position.batch;
  if (t_.schedule) t_.schedule->step(global_step_);
  if (chief()) {
    std::cout << "resumed from " << resumed->path << " (epoch " << start_epoch_ << ", batch " << start_batch_
              << ")" << std::endl;
  }
  metrics_.line(crew::str_cat("{\"type\": \"resume\", \"step\": ", global_step_,
                              ", \"epoch\": ", start_epoch_, ", \"batch\": ", start_batch_, "}"));
}

void Loop::build_loader() {
  sampler_ = std::make_shared<crew::io::DistributedBatchSampler>(
      *t_.train, f_.batch_size, crew::io::DistributedBatchSamplerOptions{.shuffle = !f_.no_shuffle});
  // On a GPU the workers copy each batch there, ahead of the step that uses it.
  const bool gpu = place_.type != crew::DeviceType::CPU;
  loader_.emplace(t_.train, sampler_,
                  crew::io::DataLoaderOptions{.num_workers = f_.num_workers,
                                              .seed = f_.seed + s_.rank,
                                              .device = gpu ? std::optional<crew::Place>(place_) : std::nullopt});
}

void Loop::checkpoint(int epoch, int64_t next_batch, bool force) {
  if (f_.checkpoint.dir.empty() || checkpointed_step_ == global_step_) return;
  if (!force && (f_.checkpoint.every_steps <= 0 || global_step_ % f_.checkpoint.every_steps != 0)) return;
  train_cnn::Position pos{global_step_, epoch, next_batch};
  if (next_batch >= static_cast<int64_t>(loader_->size())) pos = {global_step_, epoch + 1, 0};
  train_cnn::write_checkpoint(f_.checkpoint, *t_.net, *t_.opt, pos, t_.signature, s_.rank, s_.world);
  checkpointed_step_ = global_step_;
}

void Loop::step(const crew::io::Batch& batch, int epoch, int64_t batch_id, crew::ProgressBar& bar) {
  crew::Stopwatch step_watch;
  crew::Tensor loss;
  {
    auto autocast = amp_->autocast();  // forward and loss; backward runs with autocast off
    loss = t_.loss(*model_, place_.type == crew::DeviceType::CPU ? batch : on_device(batch));
  }
  amp_->backward(loss);
  amp_->step(*t_.opt);
  // Gradients dropped, not zeroed (PyTorch's zero_grad(set_to_none=True), as the peer in
  // bench/torch_models.py): the next backward hands each parameter its fresh gradient (under
  // DataParallel, copied once into its bucket) instead of adding it to a zero-filled one.
  t_.opt->clear_grad(/*set_to_zero=*/false);
  const double lr = t_.opt->get_lr();
  if (t_.schedule) t_.schedule->step();
  prof_.step += step_watch.seconds();
  ++prof_.steps;
  const float value = static_cast<float>(loss.item());
  if (chief() && global_step_ % f_.log_every == 0) {
    bar.write(
        crew::str_cat("epoch: ", epoch, ", batch_id: ", batch_id, ", loss is: [", short_float(value), "]"));
  }
  std::string global;  // with --metrics on several ranks: the mean over ranks (the global batch's loss)
  if (s_.world > 1 && !f_.metrics.empty()) {
    crew::Tensor mean = crew::Tensor::from_vector<float>({value});
    crew::dist::all_reduce(mean);
    global = ", \"global_loss\": " + short_float(mean.data<float>()[0] / static_cast<float>(s_.world));
  }
  metrics_.line(crew::str_cat("{\"type\": \"step\", \"epoch\": ", epoch, ", \"step\": ", global_step_,
                              ", \"loss\": ", short_float(value), global, ", \"lr\": ", lr, "}"));
  char postfix[32];
  std::snprintf(postfix, sizeof postfix, "loss=%.4f", value);
  bar.set_postfix(postfix);
  bar.update();
  ++global_step_;
  if (++steps_run_ == f_.warmup_rate_steps) {
    rate_watch_.reset();
    rate_samples_ = 0;
  } else {
    rate_samples_ += batch[0].size(0) * s_.world;
  }
}

bool Loop::run_epoch(int epoch) {
  sampler_->set_epoch(epoch);
  const int64_t first_batch = epoch == start_epoch_ ? start_batch_ : 0;
  loader_->resume_at(static_cast<uint64_t>(epoch), first_batch);
  crew::ProgressBar bar(loader_->size(), {.desc = "epoch " + std::to_string(epoch), .initial = first_batch});
  crew::Stopwatch epoch_watch, wait_watch;
  int64_t batch_id = first_batch, samples = 0;
  for (auto& batch : *loader_) {
    train_cnn::maybe_inject_fault(global_step_, s_.rank, s_.world);
    prof_.data_wait += wait_watch.seconds();
    step(batch, epoch, batch_id, bar);
    samples += batch[0].size(0) * s_.world;
    ++batch_id;
    stop_ = f_.max_steps > 0 && global_step_ - max_steps_from_ >= f_.max_steps;
    checkpoint(epoch, batch_id,
               stop_ || (epoch + 1 == f_.epochs && batch_id == static_cast<int64_t>(loader_->size())));
    if (!f_.checkpoint.dir.empty()) stop_signal_ = train_cnn::agreed_stop_signal(s_.world);
    if (stop_signal_) checkpoint(epoch, batch_id, true);
    if (stop_ || stop_signal_) break;
    wait_watch.reset();
  }
  bar.close();
  const double seconds = epoch_watch.seconds();
  const double rate = seconds > 0 ? static_cast<double>(samples * t_.units_per_sample) / seconds : 0.0;
  metrics_.line(crew::str_cat("{\"type\": \"epoch\", \"epoch\": ", epoch, ", \"steps\": ", batch_id, ", \"",
                              t_.unit, "_per_s\": ", rate, ", \"train_seconds\": ", seconds, "}"));
  if (chief()) {
    char line[160];
    std::snprintf(line, sizeof line, "epoch %d: %.0f %s/s", epoch, rate, t_.unit.c_str());
    std::cout << line << std::endl;
  }
  return !stop_ && !stop_signal_;
}

int Loop::run() {
  amp_.emplace(f_.amp, *t_.net, *t_.opt);  // O2 converts the parameters: before resume and DataParallel
  resume();
  max_steps_from_ = f_.checkpoint.dir.empty() ? global_step_ : 0;
  // --device gpu: parameters (moved in place, so the optimizer built before keeps them),
  // batches and the optimizer's state on the GPU; ranks sharing one GPU name it ("gpu:0").
  place_ = crew::set_device(f_.device);
  if (place_.type != crew::DeviceType::CPU) {
    if (!f_.checkpoint.dir.empty()) {
      throw crew::ValueError(t_.program + ": --device " + f_.device +
                             " trains from fresh or --init weights (no --checkpoint-dir yet)");
    }
    t_.net->to(place_);
  }
  model_ = t_.net.get();
  if (s_.world > 1) {
    crew::DataParallelOptions dpo;
    dpo.comm_buffer_bytes = static_cast<size_t>(f_.comm_buffer_mb * (1 << 20));
    dpo.last_comm_buffer_bytes = static_cast<size_t>(f_.last_comm_buffer_mb * (1 << 20));
    if (f_.comm_dtype != "float32")
      dpo.comm_dtype = f_.comm_dtype == "bf16" ? crew::DType::BFLOAT16 : crew::DType::FLOAT16;
    dp_ = std::make_shared<crew::DataParallel>(t_.net, dpo);
    model_ = dp_.get();
  }
  build_loader();
  if (chief()) {
    std::cout << t_.program << ": " << s_.world << (s_.world > 1 ? " ranks" : " process") << " x "
              << crew::get_num_threads() << " thread(s), batch " << f_.batch_size << " per rank, "
              << loader_->size() << " steps per epoch, " << amp_->describe()
              << (s_.world > 1 && f_.comm_dtype != "float32" ? ", gradients sent in " + f_.comm_dtype : "")
              << std::endl;
  }
  stop_ = f_.max_steps > 0 && global_step_ - max_steps_from_ >= f_.max_steps;
  for (int epoch = start_epoch_; epoch < f_.epochs && !stop_ && !stop_signal_; ++epoch) {
    if (!run_epoch(epoch)) break;
  }
  const double seconds = rate_watch_.seconds();
  const double rate = steps_run_ > f_.warmup_rate_steps && seconds > 0
                          ? static_cast<double>(rate_samples_ * t_.units_per_sample) / seconds
                          : 0.0;
  report(rate);
  if (chief() && !f_.save_model.empty()) crew::save(t_.net->state_dict(), f_.save_model);
  if (stop_signal_) {
    if (chief()) {
      std::cout << t_.program << ": stopped by " << train_cnn::signal_name(stop_signal_) << " after step "
                << global_step_ << ", checkpoint written" << std::endl;
    }
    return 128 + stop_signal_;
  }
  return 0;
}

// The done line and, with --profile, every rank's split of a step.
void Loop::report(double rate) {
  const double comm = dp_ && dp_->reducer() ? dp_->reducer()->total_comm_wait_seconds() : 0.0;
  const auto n = static_cast<double>(std::max<int64_t>(1, prof_.steps));
  std::vector<float> mine = {
      static_cast<float>(1000 * (prof_.step - comm) / n), static_cast<float>(1000 * comm / n),
      static_cast<float>(1000 * prof_.data_wait / n), static_cast<float>(peak_rss_mb())};
  const crew::Tensor own = crew::Tensor::from_vector(mine);
  std::vector<crew::Tensor> all;
  if (s_.world > 1) {
    crew::dist::all_gather(all, own);
  } else {
    all.push_back(own);
  }
  double rss = 0;
  for (const auto& t : all) rss = std::max(rss, static_cast<double>(t.data<float>()[3]));
  // On a device: this rank's peak of device memory held by tensors (PyTorch's max_memory_allocated).
  const double device_mb = static_cast<double>(crew::device_peak_memory(place_)) / (1 << 20);
  const std::string device_field =
      place_.host_accessible() ? "" : crew::str_cat(", \"peak_device_mb\": ", device_mb);
  metrics_.line(crew::str_cat("{\"type\": \"done\", \"steps\": ", global_step_, ", \"", t_.unit,
                              "_per_s\": ", rate, ", \"peak_rss_mb\": ", rss, device_field, "}"));
  if (!chief()) return;
  char line[200];
  std::snprintf(line, sizeof line, "done: %lld steps, %.0f %s/s, peak RSS %.0f MB (largest rank)",
                static_cast<long long>(global_step_), rate, t_.unit.c_str(), rss);
  std::cout << line;
  if (!place_.host_accessible()) {
    std::cout << ", peak " << place_.to_string() << " memory " << device_mb << " MB";
  }
  std::cout << std::endl;
  if (!f_.profile) return;
  for (size_t r = 0; r < all.size(); ++r) {
    const float* v = all[r].data<float>();
    std::snprintf(
        line, sizeof line,
        "profile rank %zu (%lld steps): compute %.2f ms + communication wait %.2f ms + data wait %.2f ms "
        "per step",
        r, static_cast<long long>(prof_.steps), v[0], v[1], v[2]);
    std::cout << line << std::endl;
  }
}

}  // namespace

int train(const TrainFlags& flags, const Session& session, TrainTask& task) {
  if (!task.loss) {
    task.loss = [](crew::nn::Layer& model, const crew::io::Batch& b) {
      return crew::nn::functional::cross_entropy(model(b[0]), b[1]);
    };
  }
  task.signature.insert({{"world_size", std::to_string(session.world)},
                         {"batch_size", std::to_string(flags.batch_size)},
                         {"seed", std::to_string(flags.seed)},
                         {"shuffle", flags.no_shuffle ? "0" : "1"}});
  Loop loop(flags, session, task);
  return loop.run();
}

}  // namespace trainer
