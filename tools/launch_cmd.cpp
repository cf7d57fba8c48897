// `crew launch [options] PROGRAM [ARGS...]`: parses the command line into LaunchOptions and
// runs the launcher (crew/launch/launcher.h). Exit status: the job's (the first failing
// worker's code, 128 + signal for a signal death), 2 for a bad command line.
#include <CLI/CLI.hpp>

#include <iostream>
#include <set>

#include "crew/core/env.h"
#include "crew/core/error.h"
#include "crew/launch/launcher.h"
#include "crew/launch/options.h"
#include "tools/subcommand.h"

namespace crew::tools {
namespace {

int run_launch_command(int argc, char** argv) {
  launch::LaunchOptions o;
  CLI::App app{"Start the workers of a data-parallel job on this node (Paddle's distributed.launch).", "crew launch"};
  app.prefix_command();  // everything from PROGRAM on belongs to the program
  std::string grace = "5s";
  std::string rendezvous_timeout = "5m";
  std::string restart_backoff = "1s";
  std::string log_ranks = "0";
  std::string cpu_affinity = "on";
  std::map<std::string, CLI::Option*> opts;
  opts["devices"] = app.add_option("--devices,--gpus", o.devices, "device ids, e.g. 0,1,2 (CPU slots without a GPU); default: all visible");
  opts["nproc_per_node"] = app.add_option("--nproc_per_node", o.nproc_per_node, "workers on this node (default: one per device)");
  opts["nnodes"] = app.add_option("--nnodes", o.nnodes, "number of nodes (default 1)");
  opts["master"] = app.add_option("--master", o.master, "HOST:PORT where node 0's launcher serves the job's store");
  opts["rank"] = app.add_option("--rank", o.rank, "this node's rank (needed with --nnodes > 1)");
  opts["host"] = app.add_option("--host", o.host, "this node's address as other nodes reach it");
  opts["log_dir"] = app.add_option("--log_dir", o.log_dir, "directory for workerlog.N and envlog.N (default log)");
  opts["log_level"] = app.add_option("--log_level", o.log_level, "launcher log level: DEBUG, INFO, WARNING, ERROR");
  opts["log_overwrite"] = app.add_flag("--log_overwrite", o.log_overwrite, "truncate worker logs instead of appending");
  opts["log_ranks"] = app.add_option("--log_ranks", log_ranks, "local ranks the console shows: '0' (default), 'all' or a list such as '0,3' (prefixed when more than one)");
  opts["max_restart"] = app.add_option("--max_restart", o.max_restart, "restarts of the whole job after a failure (default 0)");
  opts["restart_backoff"] = app.add_option("--restart_backoff", restart_backoff, "pause before each restart (default 1s; 0 allowed)");
  opts["job_id"] = app.add_option("--job_id", o.job_id, "job name (default 'default')");
  opts["token"] = app.add_option("--token", o.token, "shared secret given to workers as CREW_JOB_TOKEN");
  opts["grace_period"] = app.add_option("--grace_period", grace, "SIGTERM-to-SIGKILL grace for stopping workers (default 5s)");
  opts["rendezvous_timeout"] = app.add_option("--rendezvous_timeout", rendezvous_timeout, "how long nodes wait for each other (default 5m)");
  opts["cpu_affinity"] = app.add_option("--cpu_affinity", cpu_affinity, "pin CPU workers to their share of the cores: on/off (default on)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  try {
    std::vector<std::string> rest = app.remaining();
    if (!rest.empty() && rest[0].size() > 1 && rest[0][0] == '-' ) {
      throw ValueError("launch: unknown option '" + rest[0] + "' (see crew launch --help)");
    }
    if (!rest.empty() && rest[0] == "--") rest.erase(rest.begin());
    if (!rest.empty()) {
      o.program = rest[0];
      o.program_args.assign(rest.begin() + 1, rest.end());
    }
    std::set<std::string> given;
    for (const auto& [name, opt] : opts) {
      if (opt->count() > 0) given.insert(name);
    }
    o.log_ranks = launch::parse_console_ranks(log_ranks);
    o.grace_period = env::parse_duration(grace, "--grace_period");
    o.rendezvous_timeout = env::parse_duration(rendezvous_timeout, "--rendezvous_timeout");
    o.restart_backoff = env::parse_duration(restart_backoff, "--restart_backoff");
    if (cpu_affinity != "on" && cpu_affinity != "off") {
      throw ValueError("launch: --cpu_affinity='" + cpu_affinity + "': expected 'on' or 'off'");
    }
    o.cpu_affinity = cpu_affinity == "on";
    launch::apply_environment(&o, given);
    launch::validate(o);
  } catch (const Error& e) {
    std::cerr << "crew launch: " << e.what() << "\n";
    return 2;
  }
  return launch::run_launch(o);
}

}  // namespace

CREW_REGISTER_SUBCOMMAND(launch, "start the workers of a data-parallel job (Paddle's distributed.launch)",
                         run_launch_command);

}  // namespace crew::tools
