#include "examples/trainer/flags.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

namespace trainer {

void add_train_flags(CLI::App& app, TrainFlags& f) {
  app.add_option("--epochs", f.epochs, "epochs")
      ->check(crew::cli::at_least(f.epochs, 0))
      ->capture_default_str();
  app.add_option("--batch-size", f.batch_size, "batch size per rank")
      ->check(crew::cli::above(f.batch_size, 0))
      ->capture_default_str();
  app.add_option("--lr", f.lr, "learning rate")->check(crew::cli::above(f.lr, 0))->capture_default_str();
  app.add_option("--seed", f.seed, "random seed (weights, shuffles, augmentation)")
      ->check(crew::cli::any_value(f.seed));
  app.add_option("--max-steps", f.max_steps,
                 "stop after N steps in this run (with --checkpoint-dir: in all runs; 0: no limit)")
      ->check(crew::cli::at_least(f.max_steps, 0));
  app.add_flag("--no-shuffle", f.no_shuffle, "keep the data set order (step s takes samples sB..sB+B-1)");
  app.add_option("--init", f.init, "initial weights (safetensors, keys as in state_dict())");
  app.add_option("--metrics", f.metrics, "append JSON lines (per step, per epoch, done) to FILE");
  app.add_option("--save-model", f.save_model, "write the trained model's state_dict to FILE (safetensors)");
  app.add_flag("--profile", f.profile,
               "print where a step's time goes (compute, communication wait, data wait)");
  app.add_option("--checkpoint-dir", f.checkpoint.dir,
                 "restartable checkpoints: resume from the newest complete one in DIR, write new ones");
  app.add_option("--checkpoint-every", f.checkpoint.every_steps,
                 "checkpoint after every N steps (and at the end)")
      ->check(crew::cli::at_least(f.checkpoint.every_steps, 0));
  app.add_option("--checkpoint-keep", f.checkpoint.keep, "checkpoints kept")
      ->check(crew::cli::above(f.checkpoint.keep, 0));
  app.add_option("--num-workers", f.num_workers, "DataLoader worker threads")
      ->check(crew::cli::at_least(f.num_workers, 0));
  app.add_option("--threads", f.threads, "compute threads (0: CREW_NUM_THREADS or all cores)")
      ->check(crew::cli::at_least(f.threads, 0));
  app.add_option("--device", f.device, "cpu, gpu or gpu:N (Paddle's set_device; gpu: the rank's own GPU)");
  app.add_option("--lr-schedule", f.lr_schedule, "constant, or cosine (after --warmup-steps linear warm-up)")
      ->check(CLI::IsMember({"constant", "cosine"}));
  app.add_option("--warmup-steps", f.warmup_steps, "linear warm-up steps from 0 to --lr")
      ->check(crew::cli::at_least(f.warmup_steps, 0));
  app.add_option("--comm-buffer-size", f.comm_buffer_mb, "DataParallel bucket cap in MiB")
      ->check(crew::cli::above(f.comm_buffer_mb, 0));
  app.add_option("--last-comm-buffer-size", f.last_comm_buffer_mb, "DataParallel first bucket in MiB")
      ->check(crew::cli::above(f.last_comm_buffer_mb, 0));
  app.add_option("--log-every", f.log_every, "print the loss line every N steps")
      ->check(crew::cli::above(f.log_every, 0));
  app.add_option("--comm-dtype", f.comm_dtype,
                 "DataParallel gradient communication: float32, or bf16/fp16 (cast for the all_reduce, "
                 "averaged back in float32, half the bytes)")
      ->check(CLI::IsMember({"float32", "bf16", "fp16"}))
      ->capture_default_str();
  add_amp_flags(app, f.amp);
}

std::string directory_problem(const std::string& dir) {
  std::error_code ec;
  if (std::filesystem::exists(dir, ec) && !std::filesystem::is_directory(dir, ec)) return "not a directory";
  std::filesystem::create_directories(dir, ec);
  if (ec) return "cannot create it: " + ec.message();
  if (::access(dir.c_str(), W_OK | X_OK) != 0) return std::string("not writable: ") + std::strerror(errno);
  return "";
}

std::string file_problem(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return "is a directory";
  std::ofstream out(path, std::ios::app);
  if (!out) return std::string("cannot open it for writing: ") + std::strerror(errno);
  return "";
}

bool check_output_paths(const TrainFlags& f, const std::string& program) {
  bool ok = true;
  if (!f.checkpoint.dir.empty()) {
    const std::string why = directory_problem(f.checkpoint.dir);
    if (!why.empty())
      std::cerr << program << ": --checkpoint-dir " << f.checkpoint.dir << ": " << why << std::endl;
    ok = why.empty();
  }
  if (!f.metrics.empty()) {
    const std::string why = file_problem(f.metrics);
    if (!why.empty()) std::cerr << program << ": --metrics " << f.metrics << ": " << why << std::endl;
    ok = ok && why.empty();
  }
  if (!f.save_model.empty()) {
    const std::string why = file_problem(f.save_model);
    if (!why.empty()) std::cerr << program << ": --save-model " << f.save_model << ": " << why << std::endl;
    ok = ok && why.empty();
  }
  if (!f.init.empty() && !std::filesystem::is_regular_file(f.init)) {
    std::cerr << program << ": --init " << f.init << ": no such file" << std::endl;
    ok = false;
  }
  return ok;
}

}  // namespace trainer
