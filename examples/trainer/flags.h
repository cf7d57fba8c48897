#pragma once
// The command-line options train_resnet and train_gpt share (train_cnn's names):
// --epochs --max-steps --batch-size --lr --seed --no-shuffle --init --metrics --profile
// --checkpoint-dir --checkpoint-every --checkpoint-keep --num-workers --threads --save-model
// --lr-schedule --warmup-steps --comm-buffer-size --last-comm-buffer-size --log-every --device,
// and --amp --amp-level (examples/trainer/amp.h), --comm-dtype.
#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

#include "examples/train_cnn_checkpoint.h"
#include "examples/trainer/amp.h"
#include "tools/cli_checks.h"

namespace trainer {

struct TrainFlags {
  int epochs = 1;
  int64_t batch_size = 32;
  double lr = 1e-3;
  uint64_t seed = 1;
  int64_t max_steps = 0;  // 0: no limit
  bool no_shuffle = false;
  std::string init;        // safetensors file with initial weights (state_dict keys)
  std::string metrics;     // JSON-lines file (rank 0)
  std::string save_model;  // safetensors file: the model's state_dict at the end (rank 0)
  bool profile = false;
  train_cnn::CheckpointConfig checkpoint;
  int num_workers = 2;
  int threads = 0;                       // 0: CREW_NUM_THREADS or all cores
  std::string lr_schedule = "constant";  // or "cosine": LinearWarmup(warmup_steps) then cosine to 0
  int64_t warmup_steps = 0;
  double comm_buffer_mb = 25;          // DataParallel bucket cap (Paddle's comm_buffer_size)
  double last_comm_buffer_mb = 1;      // DataParallel first bucket (Paddle's last_comm_buffer_size)
  std::string comm_dtype = "float32";  // or bf16/fp16: DataParallelOptions::comm_dtype
  int64_t log_every = 100;
  AmpFlags amp;
  int64_t warmup_rate_steps = 5;  // steps left out of the reported rate (start-up, first allocations)
  std::string device = "cpu";     // Paddle's set_device: cpu, gpu (the rank's own GPU), gpu:N
};

// Registers the shared options on app with the given defaults in flags.
void add_train_flags(CLI::App& app, TrainFlags& flags);
// Why an output directory cannot be used ("" when it can): created if missing, then writable.
std::string directory_problem(const std::string& dir);
// Why an output file cannot be appended to ("" when it can); creates it, as the run would.
std::string file_problem(const std::string& path);
// Every output path checked before any data is read; prints "<program>: --flag PATH: why".
bool check_output_paths(const TrainFlags& flags, const std::string& program);

}  // namespace trainer
