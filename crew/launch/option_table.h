#pragma once
// The options of `crew launch`, one row each: every place that names an option reads its row.
// The command line (tools/launch_cmd.cpp) declares a flag per row; apply_environment reads
// CREW_LAUNCH_<NAME> and the row's Paddle variables; a row's `set` parses a value wherever it
// came from and `check` validates it (both name the flag or the variable); describe() prints
// each row's `show`, which --help also shows as the default (that of LaunchOptions{}).
//
//   for (const LaunchOptionSpec& spec : launch_option_table())
//     if (auto v = env::get(env_name(spec).c_str())) spec.set(options, *v, env_name(spec));
#include <string>
#include <vector>

#include "crew/launch/options.h"

namespace crew::launch {

// A Paddle (or other) variable read for an option after CREW_LAUNCH_<NAME>.
struct OptionAlias {
  // What a launch inside a crew worker (CREW_RANK set) does with the variable: a launcher
  // exports PADDLE_MASTER, PADDLE_NNODES, PADDLE_TRAINER_ID and CREW_JOB_TOKEN to its
  // workers, and a nested launch must not join its parent's job.
  enum class InWorker { USE, WARN_AND_SKIP, SKIP };
  const char* name;
  InWorker in_worker = InWorker::USE;
  // nullptr, or whether a value counts (PADDLE_TRAINER_ID only when >= 0, as Paddle).
  bool (*counts)(const std::string& value) = nullptr;
};

struct LaunchOptionSpec {
  // How the command line takes and --help shows the option.
  enum class Kind { TEXT, INT, FLAG, DURATION, CHOICE };
  const char* name;   // "max_restart": the key of `given`, CREW_LAUNCH_MAX_RESTART, --max_restart
  const char* flags;  // every command-line spelling, CLI11-style: "--max_restart,--max-restarts"
  std::vector<OptionAlias> aliases;
  Kind kind;
  int min;  // INT: the least value the command line accepts
  const char* help;
  // Parses `text` into the options and checks it; throws ValueError naming `what` (the flag
  // or the variable) and the value.
  void (*set)(LaunchOptions& o, const std::string& text, const std::string& what);
  // Throws ValueError naming `what` when the option's value is not allowed (validate()).
  void (*check)(const LaunchOptions& o, const std::string& what);
  // The value as the configuration block prints it; nullptr for a secret (the token).
  std::string (*show)(const LaunchOptions& o);
};

// Every option, in the order of the configuration block.
const std::vector<LaunchOptionSpec>& launch_option_table();
// "CREW_LAUNCH_MAX_RESTART".
std::string env_name(const LaunchOptionSpec& spec);
// "--max_restart": how errors about a command-line value name the option.
std::string flag_name(const LaunchOptionSpec& spec);
// "5s", "500ms", "5m", "0ms": a duration as --help and the configuration block show it.
std::string format_duration(std::chrono::milliseconds d);

}  // namespace crew::launch
