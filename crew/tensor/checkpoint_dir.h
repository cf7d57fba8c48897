#pragma once
// A directory of numbered training checkpoints, written atomically, the last `keep` kept
// (docs/checkpoints.md):
//
//   DIR/step-000000000120/            one checkpoint: the state at training step 120
//         <name>.safetensors          one file per part ("model", "optimizer", "state", ...),
//                                     each with the CRC-32C of its tensor bytes (crew::save)
//         MANIFEST.safetensors        written last: step, the part names, the metadata
//   DIR/.tmp-step-.../                a checkpoint being written (never read; pruned)
//
// write_checkpoint() writes the parts and the manifest into a temporary directory, fsyncs
// them, renames the directory to step-<step> and fsyncs DIR: a crash at any point leaves
// either no step-<step> or a complete one. load_newest_checkpoint() verifies the newest one
// (manifest readable, every part present and passing its checksum) and falls back to the
// next older one, reporting each skipped checkpoint with the file and the reason. Pruning
// removes only checkpoints superseded by options.keep newer ones that verify.
//
//   crew::dist::write_checkpoint(dir, step, {{"model", model.state_dict()}}, {{"epoch", "2"}});
//   if (auto ckpt = crew::dist::load_newest_checkpoint(dir)) model.set_state_dict(ckpt->parts.at("model"));
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "crew/tensor/state_dict.h"

namespace crew {

struct CheckpointWriteOptions {
  int keep = 3;  // complete checkpoints kept after a write (the newest); >= 1
};

struct LoadedCheckpoint {
  int64_t step = 0;
  std::string path;                             // DIR/step-...
  std::map<std::string, StateDict> parts;       // by part name
  std::map<std::string, std::string> metadata;  // as given to write_checkpoint
};

// Writes the checkpoint of `step` (>= 0) into dir (created if missing), replacing one of the
// same step, then removes the step-* directories older than the newest options.keep that
// verify, and any leftover temporary ones. A step-* directory that does not verify (corrupt,
// truncated, incomplete) is never removed by pruning and does not count towards keep. Part names are
// [A-Za-z0-9_-]+. Returns the checkpoint's path. IOError on OS failures, ValueError on bad arguments.
std::string write_checkpoint(const std::string& dir, int64_t step,
                             const std::map<std::string, StateDict>& parts,
                             const std::map<std::string, std::string>& metadata = {},
                             CheckpointWriteOptions options = {});

// The steps of the step-* directories in dir, newest first (not verified). Empty when dir
// does not exist.
std::vector<int64_t> list_checkpoints(const std::string& dir);

// Loads and verifies the checkpoint of `step`; ValueError/IOError naming the file and why.
LoadedCheckpoint load_checkpoint(const std::string& dir, int64_t step);

// The newest checkpoint that verifies, or nullopt when none does. Each one skipped is
// appended to *skipped (when given) as "<file>: <reason>" and logged as a warning.
std::optional<LoadedCheckpoint> load_newest_checkpoint(const std::string& dir,
                                                       std::vector<std::string>* skipped = nullptr);

// The directory name of a step: "step-" and 12 digits.
std::string checkpoint_dir_name(int64_t step);

}  // namespace crew
