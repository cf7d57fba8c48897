#include "crew/launch/options.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>

#include "crew/core/check.h"
#include "crew/core/env.h"
#include "crew/core/job_token.h"
#include "crew/core/logging.h"
#include "crew/launch/option_table.h"

namespace crew::launch {
namespace {

// The value for `spec` from the environment and the variable it came from: CREW_LAUNCH_<NAME>,
// then the row's aliases in order.
std::optional<std::pair<std::string, std::string>> lookup(const LaunchOptionSpec& spec, bool inside_worker) {
  const std::string own = env_name(spec);
  if (auto v = env::get(own.c_str())) return std::pair(own, *v);
  for (const OptionAlias& a : spec.aliases) {
    auto v = env::get(a.name);
    if (!v || (a.counts && !a.counts(*v))) continue;
    if (inside_worker && a.in_worker != OptionAlias::InWorker::USE) {
      if (a.in_worker == OptionAlias::InWorker::WARN_AND_SKIP) {
        CREW_LOG(WARNING) << "launch: ignoring " << a.name << "=" << *v
                          << " (set by the launcher of the job this process belongs to)";
      }
      continue;
    }
    return std::pair(std::string(a.name), *v);
  }
  return std::nullopt;
}

}  // namespace

bool ConsoleRanks::shows(int local_rank) const {
  return all || std::binary_search(local_ranks.begin(), local_ranks.end(), local_rank);
}

std::string to_string(const ConsoleRanks& ranks) {
  if (ranks.all) return "all";
  std::string out;
  for (int r : ranks.local_ranks) {
    if (!out.empty()) out += ',';
    out += std::to_string(r);
  }
  return out;
}

ConsoleRanks parse_console_ranks(const std::string& text) {
  ConsoleRanks ranks;
  if (text == "all") {
    ranks.all = true;
    return ranks;
  }
  try {
    ranks.local_ranks = parse_id_list(text, "--log_ranks");
  } catch (const ValueError&) {
    CREW_THROW(ValueError, "--log_ranks='", text, "': expected 'all' or local ranks such as '0' or '0,3'");
  }
  std::sort(ranks.local_ranks.begin(), ranks.local_ranks.end());
  return ranks;
}

std::string read_token_file(const std::string& path) { return read_job_token_file(path, "--token-file"); }

std::vector<std::string> apply_environment(LaunchOptions* o, const std::set<std::string>& given) {
  std::vector<std::string> used;
  const bool inside_worker = env::get("CREW_RANK").has_value();
  for (const LaunchOptionSpec& spec : launch_option_table()) {
    if (given.count(spec.name)) continue;
    auto found = lookup(spec, inside_worker);
    if (!found) continue;
    const auto& [variable, value] = *found;
    spec.set(*o, value, variable);
    used.push_back(variable + "=" + (spec.show ? value : "(hidden)"));
  }
  return used;
}

void validate(const LaunchOptions& o) {
  CREW_CHECK(!o.program.empty(),
             "no training program given (usage: crew launch [options] PROGRAM [ARGS...])");
  for (const LaunchOptionSpec& spec : launch_option_table()) {
    if (spec.check) spec.check(o, flag_name(spec));
  }
  if (o.nnodes > 1) {
    CREW_CHECK(!o.master.empty(), "--nnodes ", o.nnodes,
               " needs --master HOST:PORT (the address node 0's launcher serves the store on)");
    CREW_CHECK(o.rank >= 0 && o.rank < o.nnodes, "--rank must be in [0, ", o.nnodes, ") with --nnodes ",
               o.nnodes, ", got ", o.rank);
  } else {
    CREW_CHECK(o.rank <= 0, "--rank ", o.rank, " is out of range for a single node (--nnodes 1)");
  }
}

std::vector<std::pair<std::string, std::string>> describe(const LaunchOptions& o) {
  std::vector<std::pair<std::string, std::string>> d;
  for (const LaunchOptionSpec& spec : launch_option_table()) {
    if (spec.show) d.push_back({spec.name, spec.show(o)});
  }
  std::string args;
  for (const auto& a : o.program_args) args += (args.empty() ? "" : " ") + a;
  d.push_back({"run_mode", "collective"});
  d.push_back({"training_script", o.program});
  d.push_back({"training_script_args", args.empty() ? "[]" : "[" + args + "]"});
  if (!o.interpreter_source.empty()) d.push_back({"python", o.program + " (" + o.interpreter_source + ")"});
  return d;
}

}  // namespace crew::launch
