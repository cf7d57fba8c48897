#pragma once
// train_cnn's restartable checkpoints (docs/checkpoints.md, "train_cnn: restart with resume"):
// --checkpoint-dir DIR --checkpoint-every N --checkpoint-keep K.
//
//   DIR/step-<12 digits>/model.safetensors        the net's state_dict (identical on every rank)
//                        optimizer.safetensors    Adam's state (identical on every rank)
//                        train_state.safetensors  "position": int64 [global_step, epoch, batch];
//                                                 "rng.rank<r>": uint8, rank r's default generator
//                        MANIFEST.safetensors     metadata: the position and the run's signature
//
// Under DataParallel every rank holds the same weights and optimizer state, so rank 0 alone
// writes them (with every rank's generator state, gathered first) and the others wait at a
// barrier: when any rank goes past step N, checkpoint N is complete on disk. On start rank 0
// picks the newest checkpoint that verifies and broadcasts its step; every rank loads that one.
// Header-only: examples/*.cpp are each a program.
#include <signal.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "crew/core/env.h"
#include "crew/core/error.h"
#include "crew/core/parallel_env.h"
#include "crew/distributed/collective/collective.h"
#include "crew/distributed/collective/object_collectives.h"
#include "crew/nn/layer.h"
#include "crew/optim/optimizer.h"
#include "crew/tensor/checkpoint_dir.h"
#include "crew/tensor/random.h"

namespace train_cnn {

// Where training stands: `global_step` steps are done; the next one is batch `batch` of `epoch`.
struct Position {
  int64_t global_step = 0;
  int64_t epoch = 0;
  int64_t batch = 0;
};

struct CheckpointConfig {
  std::string dir;           // empty: no checkpoints
  int64_t every_steps = 0;   // write after every N steps (0: only at the end of the run)
  int keep = 3;              // complete checkpoints kept
  bool start_fresh = false;  // when no checkpoint in dir verifies: train from step 0, not stop
};

// What a checkpoint and the run resuming from it must agree on: the sampler's shards and
// batches depend on them (string values, stored in the manifest).
using Signature = std::map<std::string, std::string>;

inline crew::Tensor bytes_tensor(const std::string& bytes) {
  crew::Tensor t = crew::Tensor::empty({static_cast<int64_t>(bytes.size())}, crew::DType::UINT8);
  if (!bytes.empty()) std::memcpy(t.data<uint8_t>(), bytes.data(), bytes.size());
  return t;
}

inline std::string tensor_bytes(const crew::Tensor& t) {
  return std::string(reinterpret_cast<const char*>(t.data<uint8_t>()), static_cast<size_t>(t.numel()));
}

// Writes checkpoint `pos.global_step`; called by every rank at the same step.
inline void write_checkpoint(const CheckpointConfig& cfg, const crew::nn::Layer& net,
                             const crew::optim::Optimizer& opt, const Position& pos,
                             const Signature& signature, int rank, int world) {
  std::vector<std::string> rng_states;
  const std::string own = crew::default_generator().state();
  if (world > 1) {
    std::vector<crew::dist::Object> all;
    crew::dist::all_gather_object(all, crew::dist::Object::bytes(own));
    for (const auto& o : all) rng_states.push_back(o.as_bytes());
  } else {
    rng_states.push_back(own);
  }
  if (rank == 0) {
    crew::StateDict state;
    state.insert("position", crew::Tensor::from_vector<int64_t>({pos.global_step, pos.epoch, pos.batch}));
    for (size_t r = 0; r < rng_states.size(); ++r)
      state.insert("rng.rank" + std::to_string(r), bytes_tensor(rng_states[r]));
    Signature meta = signature;
    meta["global_step"] = std::to_string(pos.global_step);
    meta["epoch"] = std::to_string(pos.epoch);
    meta["batch"] = std::to_string(pos.batch);
    crew::write_checkpoint(
        cfg.dir, pos.global_step,
        {{"model", net.state_dict()}, {"optimizer", opt.state_dict()}, {"train_state", state}}, meta,
        {.keep = cfg.keep});
  }
  // Nobody goes on before the checkpoint is complete (a failure of rank 0 while writing
  // fails the job at this barrier, and the restart falls back to the previous checkpoint).
  if (world > 1) crew::dist::barrier();
}

struct Resumed {
  Position position;
  std::string path;  // DIR/step-...
};

// The error when every checkpoint in dir failed verification: each one and why.
inline std::string none_verifies_message(const std::string& dir, const std::vector<std::string>& skipped) {
  std::string out = crew::str_cat("train_cnn: --checkpoint-dir ", dir, ": none of its ", skipped.size(),
                                  " checkpoint(s) verifies, so there is nothing to resume from (they are "
                                  "kept as they are; repair or remove them, or pass --checkpoint-start-fresh "
                                  "to train from step 0):");
  for (const auto& why : skipped) out += "\n  " + why;
  return out;
}

// Restores the newest complete checkpoint of cfg.dir into net, opt and this rank's default
// generator; nullopt (nothing changed) when there is none. Called by every rank. Checkpoints
// skipped as corrupt are printed by rank 0 with their reason; when every one is skipped, every
// rank throws a StateError (rank 0's lists them) unless cfg.start_fresh.
inline std::optional<Resumed> resume(const CheckpointConfig& cfg, crew::nn::Layer& net,
                                     crew::optim::Optimizer& opt, const Signature& signature, int rank,
                                     int world) {
  constexpr int64_t kNoneVerifies = -2;
  std::optional<crew::LoadedCheckpoint> ckpt;
  std::vector<std::string> skipped;
  int64_t step = -1;
  if (rank == 0) {
    ckpt = crew::load_newest_checkpoint(cfg.dir, &skipped);
    for (const auto& why : skipped) std::cout << "skipped checkpoint " << why << std::endl;
    if (ckpt) step = ckpt->step;
    if (!ckpt && !skipped.empty() && !cfg.start_fresh) step = kNoneVerifies;
  }
  if (world > 1) {
    crew::Tensor t = crew::Tensor::from_vector<int64_t>({step});
    crew::dist::broadcast(t, 0);
    step = t.data<int64_t>()[0];
    if (rank != 0 && step >= 0) ckpt = crew::load_checkpoint(cfg.dir, step);
  }
  if (step == kNoneVerifies) {
    throw crew::StateError(rank == 0 ? none_verifies_message(cfg.dir, skipped)
                                     : crew::str_cat("train_cnn: --checkpoint-dir ", cfg.dir, " (rank ", rank,
                                                     "): rank 0 found no checkpoint that verifies"));
  }
  if (!ckpt) return std::nullopt;
  for (const auto& [key, value] : signature) {
    auto it = ckpt->metadata.find(key);
    const std::string found = it == ckpt->metadata.end() ? "(none)" : it->second;
    CREW_CHECK(found == value, "train_cnn: resume from ", ckpt->path, " (rank ", rank,
               "): it was written with ", key, " ", found, ", this run has ", key, " ", value);
  }
  const crew::StateDict& state = ckpt->parts.at("train_state");
  const std::string rng_key = "rng.rank" + std::to_string(rank);
  CREW_CHECK(state.contains(rng_key), "train_cnn: resume from ", ckpt->path, " (rank ", rank, "): no ",
             rng_key);
  const crew::Tensor& p = state.at("position");
  CREW_CHECK(p.numel() == 3 && p.dtype() == crew::DType::INT64, "train_cnn: resume from ", ckpt->path,
             ": bad position tensor");
  net.set_state_dict(ckpt->parts.at("model"));
  opt.set_state_dict(ckpt->parts.at("optimizer"));
  crew::default_generator().set_state(tensor_bytes(state.at(rng_key)));
  Resumed out;
  out.position = {p.data<int64_t>()[0], p.data<int64_t>()[1], p.data<int64_t>()[2]};
  out.path = ckpt->path;
  return out;
}

// SIGINT/SIGTERM (Ctrl-C, or the launcher stopping the job): the handler only records the
// signal; the training loop asks agreed_stop_signal() after each step and, when it is set,
// writes a checkpoint of that step and exits with 128 + the signal.
inline volatile std::sig_atomic_t stop_signal_received = 0;

inline void install_stop_handlers() {
  struct sigaction sa {};
  sa.sa_handler = [](int sig) { stop_signal_received = sig; };
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;  // the loader's and the collectives' system calls go on
  CREW_CHECK(::sigaction(SIGINT, &sa, nullptr) == 0 && ::sigaction(SIGTERM, &sa, nullptr) == 0,
             "train_cnn: sigaction(SIGINT/SIGTERM): ", std::strerror(errno));
}

// The signal every rank stops for after this step (0: none), the same on all: the largest one
// any rank has received, so that they all write the checkpoint of the same step.
inline int agreed_stop_signal(int world) {
  int64_t sig = stop_signal_received;
  if (world > 1) {
    crew::Tensor t = crew::Tensor::from_vector<int64_t>({sig});
    crew::dist::all_reduce(t, crew::dist::ReduceOp::MAX);
    sig = t.data<int64_t>()[0];
  }
  return static_cast<int>(sig);
}

inline const char* signal_name(int sig) {
  return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "a signal";
}

// Fault injection for the restart tests, in the first run of the job only (CREW_RESTART_COUNT
// 0), so that `crew launch --max_restart` has to resume it: with CREW_FAULT_KILL_AT_STEP=S,
// rank CREW_FAULT_KILL_RANK (default: the last) SIGKILLs itself before step S; with
// CREW_FAULT_HANG_AT_STEP=S it stops (sleeps) there instead, a hang that only the other ranks'
// watchdogs (CREW_HANG_TIMEOUT, CREW_HANG_ACTION=abort) or CREW_TIMEOUT end.
inline void maybe_inject_fault(int64_t global_step, int rank, int world) {
  static const long long kill_at = crew::env::get_int("CREW_FAULT_KILL_AT_STEP", -1);
  static const long long hang_at = crew::env::get_int("CREW_FAULT_HANG_AT_STEP", -1);
  if (kill_at != global_step && hang_at != global_step) return;
  if (crew::ParallelEnv::from_env().restart_count != 0) return;
  if (crew::env::get_int("CREW_FAULT_KILL_RANK", world - 1) != rank) return;
  if (kill_at == global_step) {
    std::cerr << "train_cnn: fault injection: rank " << rank << " kills itself (SIGKILL) before step "
              << global_step << std::endl;
    ::raise(SIGKILL);
  }
  std::cerr << "train_cnn: fault injection: rank " << rank << " stops (hangs) before step " << global_step
            << std::endl;
  // Until the launcher stops it (the handlers above would otherwise leave it to SIGKILL).
  while (stop_signal_received == 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  std::_Exit(128 + stop_signal_received);
}

}  // namespace train_cnn
