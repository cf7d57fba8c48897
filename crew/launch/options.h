#pragma once
// LaunchOptions: everything `crew launch` is told, with Paddle's names and defaults. Each
// option's names, environment forms, parser, check and printed form are one row of
// launch_option_table() (crew/launch/option_table.h); its default is the member's below.
//
//   LaunchOptions o;                 // filled by tools/launch_cmd.cpp from the command line
//   apply_environment(&o, given);    // PADDLE_* / CREW_LAUNCH_* forms for options not given
//   validate(o);                     // ValueError naming the option and the bad value
//   for (auto& [k, v] : describe(o)) std::cout << k << ": " << v << "\n";
#include <chrono>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "crew/core/id_list.h"  // parse_id_list, for --devices and CUDA_VISIBLE_DEVICES

namespace crew::launch {

// Which local ranks the console shows (--log_ranks): "0" (Paddle's default), "all", or a list
// such as "0,3" (torchrun's --local-ranks-filter). With more than one rank possible ("all" or
// a list of two or more), each line is prefixed with "[rank N] " (N the global rank).
struct ConsoleRanks {
  bool all = false;
  std::vector<int> local_ranks{0};  // sorted; ignored when `all`

  bool shows(int local_rank) const;
  bool prefixed() const { return all || local_ranks.size() > 1; }
};

struct LaunchOptions {
  std::string program;  // the training program (a binary or script)
  std::vector<std::string> program_args;
  std::string interpreter_source;  // for a .py script: how `program` (its interpreter) was chosen
  std::string devices;      // "0,1,2": device ids (CPU slots without a GPU); "" = all
  int nproc_per_node = -1;  // -1: one per selected device
  int nnodes = 1;
  std::string master;  // "HOST:PORT"; "" = 127.0.0.1 on a port the OS picks
  int rank = -1;       // node rank; -1 = 0 for a single node
  std::string log_dir = "log";
  std::string log_level = "INFO";
  bool log_overwrite = false;            // truncate workerlog.N instead of appending
  int max_restart = 0;  // whole-job restarts after a failure
  std::chrono::milliseconds restart_backoff{std::chrono::seconds(1)};  // pause before each restart
  std::string job_id = "default";
  ConsoleRanks log_ranks;  // local rank 0
  std::string token;       // shared secret handed to workers as CREW_JOB_TOKEN
  std::chrono::milliseconds grace_period{std::chrono::seconds(5)};  // SIGTERM -> SIGKILL
  bool cpu_affinity = true;  // pin CPU-slot workers to their share of the cores
  bool worker_tty = true;    // --worker_stdio tty: each worker's stdout/stderr is a pseudo-terminal
  std::string host;          // this node's address for other nodes ("" = detect)
  std::chrono::milliseconds rendezvous_timeout{std::chrono::minutes(5)};
  // A node whose launcher sends no heartbeat (every 500 ms) for this long is lost: the job fails
  // (or restarts), naming it.
  std::chrono::milliseconds node_timeout{std::chrono::seconds(30)};
};

// Applies the environment forms of the options not named in `given_on_command_line` (option
// names without dashes), for every row of launch_option_table(): CREW_LAUNCH_<OPTION> first,
// then the row's aliases (Paddle's PADDLE_DEVICES, PADDLE_NNODES, ..., POD_IP, CREW_JOB_TOKEN).
// Unlike Paddle, the command line wins, and inside a crew worker (CREW_RANK set) the
// variables a launcher exports to its workers (PADDLE_MASTER, PADDLE_NNODES,
// PADDLE_TRAINER_ID, CREW_JOB_TOKEN) are ignored, so a nested launch does not join its
// parent's job. A bad value throws ValueError naming the variable. Returns "NAME=value" for
// each variable used (the token's value hidden).
std::vector<std::string> apply_environment(LaunchOptions* options,
                                           const std::set<std::string>& given_on_command_line);

// Throws ValueError naming the option and its value when one fails its row's check or the
// options do not fit together.
void validate(const LaunchOptions& options);

// "option: value" pairs for the configuration block: the table's rows in order (not the
// token), then the program.
std::vector<std::pair<std::string, std::string>> describe(const LaunchOptions& options);

// The job token stored in `path` (--token-file), without surrounding whitespace. Throws
// ValueError naming --token-file and the path when the file is missing, not a regular file,
// empty, or readable by group or others (mode & 077, refused as ssh refuses such a key).
std::string read_token_file(const std::string& path);

std::string to_string(const ConsoleRanks& ranks);
// "0", "all" or "0,3"; throws ValueError naming --log_ranks otherwise.
ConsoleRanks parse_console_ranks(const std::string& text);

}  // namespace crew::launch
