// `crew launch [options] PROGRAM [ARGS...]`: parses the command line into LaunchOptions and
// runs the launcher (crew/launch/launcher.h). Exit status: the job's (the first failing
// worker's code, 128 + signal for a signal death), 2 for a bad command line.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>
#include <optional>
#include <set>

#include "crew/core/check.h"
#include "crew/core/env.h"
#include "crew/core/error.h"
#include "crew/launch/launch_log.h"
#include "crew/launch/launcher.h"
#include "crew/launch/options.h"
#include "tools/cli_checks.h"
#include "tools/subcommand.h"

namespace crew::tools {
namespace {

constexpr int kUsageError = 2;

// Flags that a training program is likely to have too (`--rank`, `--host`, `--log_level`):
// after the program they are the program's, not a misplaced launcher option.
const std::set<std::string> kSharedWithPrograms = {"--rank",      "--node-rank", "--node_rank", "--host",
                                                   "--log_level", "--help",      "-h"};

// The command line as parsed: the options, the strings still to convert, and which were given.
struct LaunchCommandLine {
  launch::LaunchOptions o;
  std::string grace = "5s";
  std::string restart_backoff = "1s";
  std::string rendezvous_timeout = "5m";
  std::string node_timeout = "30s";
  std::string log_ranks = "0";
  std::string cpu_affinity = "on";
  std::string worker_stdio = "tty";
  std::string token_file;
  std::string master_addr;  // torchrun's --master-addr / --master-port, joined into --master
  std::string master_port;
  std::map<std::string, CLI::Option*> opts;
  std::set<std::string> given;
};

void add_options(CLI::App& app, LaunchCommandLine& c) {
  launch::LaunchOptions& o = c.o;
  auto& opts = c.opts;
  app.option_defaults()->always_capture_default();  // --help shows each default
  opts["devices"] = app.add_option("--devices,--gpus", o.devices,
                                   "device ids, e.g. 0,1,2 (CPU slots without a GPU); default: all visible");
  opts["nproc_per_node"] = app.add_option("--nproc_per_node,--nproc-per-node", o.nproc_per_node,
                                          "workers on this node (-1: one per device)")
                               ->check(cli::at_least(o.nproc_per_node, -1));
  opts["nnodes"] = app.add_option("--nnodes", o.nnodes, "number of nodes")->check(cli::at_least(o.nnodes, 1));
  opts["master"] = app.add_option(
      "--master", o.master,
      "HOST:PORT where node 0's launcher serves the job's store (default: 127.0.0.1, a port the OS picks)");
  opts["master_addr"] =
      app.add_option("--master-addr,--master_addr", c.master_addr,
                     "torchrun's form of --master's HOST (default 127.0.0.1 when --master-port is given)");
  opts["master_port"] =
      app.add_option("--master-port,--master_port", c.master_port,
                     "torchrun's form of --master's PORT (default 29500 when --master-addr is given)");
  opts["rank"] = app.add_option("--rank,--node-rank,--node_rank", o.rank,
                                "this node's rank (needed with --nnodes > 1; -1: 0 on one node)")
                     ->check(cli::at_least(o.rank, -1));
  opts["host"] =
      app.add_option("--host", o.host,
                     "this node's address as other nodes reach it (default: the one routing to the master)");
  opts["log_dir"] = app.add_option("--log_dir", o.log_dir, "directory for workerlog.N and envlog.N");
  opts["log_level"] =
      app.add_option("--log_level", o.log_level, "launcher log level: DEBUG, INFO, WARNING, ERROR");
  opts["log_overwrite"] =
      app.add_flag("--log_overwrite", o.log_overwrite, "truncate worker logs instead of appending");
  opts["log_ranks"] = app.add_option(
      "--log_ranks", c.log_ranks,
      "local ranks the console shows: '0', 'all' or a list such as '0,3' (prefixed when more than one)");
  opts["max_restart"] = app.add_option("--max_restart,--max-restarts,--max_restarts", o.max_restart,
                                       "restarts of the whole job after a failure")
                            ->check(cli::at_least(o.max_restart, 0));
  opts["restart_backoff"] =
      app.add_option("--restart_backoff", c.restart_backoff, "pause before each restart (0 allowed)");
  opts["job_id"] = app.add_option("--job_id", o.job_id, "job name");
  opts["token"] = app.add_option("--token", o.token,
                                 "shared secret given to workers as CREW_JOB_TOKEN (visible in ps: prefer "
                                 "--token-file or CREW_JOB_TOKEN)");
  opts["token_file"] = app.add_option("--token-file,--token_file", c.token_file,
                                      "read the job token from this file (mode 0600)");
  opts["grace_period"] =
      app.add_option("--grace_period", c.grace, "SIGTERM-to-SIGKILL grace for stopping workers");
  opts["rendezvous_timeout"] =
      app.add_option("--rendezvous_timeout", c.rendezvous_timeout, "how long nodes wait for each other");
  opts["node_timeout"] = app.add_option("--node_timeout", c.node_timeout,
                                        "how long a node may send no heartbeat before the job counts it as lost");
  opts["cpu_affinity"] =
      app.add_option("--cpu_affinity", c.cpu_affinity, "pin CPU workers to their share of the cores: on/off");
  opts["worker_stdio"] = app.add_option(
      "--worker_stdio", c.worker_stdio,
      "workers' stdout/stderr: tty (a pseudo-terminal: live, line-buffered output) or pipe");
}

// `--name` or `--name=value` split at the '='; `value` is nullopt without one.
std::string flag_name(const std::string& arg, std::optional<std::string>* value = nullptr) {
  const size_t eq = arg.find('=');
  if (value) *value = eq == std::string::npos ? std::nullopt : std::optional(arg.substr(eq + 1));
  return arg.substr(0, eq);
}

bool takes_value(const CLI::Option* opt) { return opt->get_expected_min() > 0; }

// Walks the launcher's own arguments (up to PROGRAM or `--`) before CLI11 parses them, so that
// `--devices= ./prog` is an error instead of a --devices value of './prog'. Returns the index
// of the first argument that is not the launcher's.
int check_launcher_args(const CLI::App& app, int argc, char** argv) {
  int i = 1;
  while (i < argc && argv[i][0] == '-' && std::string(argv[i]) != "--") {
    std::optional<std::string> value;
    const std::string name = flag_name(argv[i], &value);
    const CLI::Option* opt = app.get_option_no_throw(name);
    if (opt == nullptr) return i;  // unknown: reported after parsing
    if (value && value->empty()) {
      throw ValueError(
          str_cat(name, " has an empty value ('", argv[i], "'): give one or leave the option out"));
    }
    i += (!value && takes_value(opt)) ? 2 : 1;
  }
  return std::min(i, argc);
}

std::string join(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

// Throws when a launcher option follows PROGRAM (`crew launch prog --devices=0,1`), with the
// command as it should be. Arguments after a `--` among the program's are left alone.
void reject_misplaced_flags(const CLI::App& app, int argc, char** argv, int program_at,
                            const std::vector<std::string>& program_args) {
  std::vector<std::string> launcher(argv + 1, argv + program_at), moved, rest;
  bool found = false;
  for (size_t i = 0; i < program_args.size(); ++i) {
    const std::string& arg = program_args[i];
    if (arg == "--") {
      rest.insert(rest.end(), program_args.begin() + i, program_args.end());
      break;
    }
    std::optional<std::string> value;
    const std::string name = flag_name(arg, &value);
    const CLI::Option* opt = arg.rfind("-", 0) == 0 ? app.get_option_no_throw(name) : nullptr;
    if (opt == nullptr || kSharedWithPrograms.count(name)) {
      rest.push_back(arg);
      continue;
    }
    found = true;
    moved.push_back(arg);
    if (!value && takes_value(opt) && i + 1 < program_args.size()) moved.push_back(program_args[++i]);
  }
  if (!found) return;
  const std::string program = argv[program_at];
  std::vector<std::string> fixed = launcher;
  fixed.insert(fixed.end(), moved.begin(), moved.end());
  fixed.push_back(program);
  fixed.insert(fixed.end(), rest.begin(), rest.end());
  std::vector<std::string> separated = launcher;
  separated.push_back("--");
  separated.push_back(program);
  separated.insert(separated.end(), program_args.begin(), program_args.end());
  throw ValueError(str_cat(
      "launcher options must come before the program: crew launch ", join(fixed), "\n(to pass ", moved[0],
      " to the program instead, put '--' before the program: crew launch ", join(separated), ")"));
}

// "unknown option '--log-dir'", with "did you mean --log_dir?" when only '-' vs '_' differs.
std::string unknown_option(const CLI::App& app, const std::string& arg) {
  std::string name = flag_name(arg), other = name;
  for (size_t i = 2; i < other.size(); ++i) {
    if (other[i] == '-' || other[i] == '_') other[i] = other[i] == '-' ? '_' : '-';
  }
  std::string message = "unknown option '" + name + "'";
  if (const CLI::Option* opt = app.get_option_no_throw(other)) {
    message += "; did you mean " + opt->get_name() + "?";
  }
  return message + " (see crew launch --help)";
}

// Joins torchrun's --master-addr / --master-port into --master (torchrun's defaults for the
// half not given: 127.0.0.1, 29500).
void apply_torchrun_master(LaunchCommandLine& c) {
  if (!c.given.count("master_addr") && !c.given.count("master_port")) return;
  if (c.given.count("master"))
    throw ValueError("--master and --master-addr/--master-port are both given; pass one");
  c.o.master = (c.master_addr.empty() ? "127.0.0.1" : c.master_addr) + ":" +
               (c.master_port.empty() ? "29500" : c.master_port);
  c.given.insert("master");
}

void apply_token_file(LaunchCommandLine& c) {
  if (c.given.count("token_file")) {
    if (c.given.count("token")) throw ValueError("--token and --token-file are both given; pass one");
    c.o.token = launch::read_token_file(c.token_file);
    c.given.insert("token");
  } else if (c.given.count("token")) {
    launch::launch_warning(
        "--token is visible to other users of this host (ps, /proc/PID/cmdline); "
        "prefer --token-file PATH or CREW_JOB_TOKEN");
  }
}

// A training script ending in .py runs under an interpreter, as Paddle's launcher does: the one
// that ran `python -m crew.distributed.launch` (it exports CREW_PYTHON = sys.executable), else
// the one crew's Python package was built for, else python3 on PATH. The first python3 on PATH
// may be another interpreter (a pyenv shim) without numpy or crew.
void run_python_scripts_with_interpreter(launch::LaunchOptions& o) {
  const std::string& p = o.program;
  if (p.size() < 4 || p.compare(p.size() - 3, 3, ".py") != 0) return;
  o.program_args.insert(o.program_args.begin(), p);
  const std::string from_env = env::get_string("CREW_PYTHON", "");
  if (!from_env.empty()) {
    o.program = from_env;
    o.interpreter_source = "CREW_PYTHON (the interpreter that ran python -m crew.distributed.launch)";
    return;
  }
#ifdef CREW_BUILT_PYTHON
  o.program = CREW_BUILT_PYTHON;
  o.interpreter_source = "the interpreter crew was built for";
#else
  o.program = "python3";
  o.interpreter_source = "python3 on PATH (crew was built without its Python package)";
#endif
}

// Everything after CLI11: the program, the checks CLI11 cannot make, the conversions.
void finish_options(const CLI::App& app, int argc, char** argv, int program_at, LaunchCommandLine& c) {
  launch::LaunchOptions& o = c.o;
  std::vector<std::string> rest = app.remaining();
  const bool separated = !rest.empty() && rest[0] == "--";
  if (separated) rest.erase(rest.begin());
  if (!separated && !rest.empty() && rest[0].size() > 1 && rest[0][0] == '-') {
    throw ValueError(unknown_option(app, rest[0]));
  }
  if (!rest.empty()) {
    o.program = rest[0];
    o.program_args.assign(rest.begin() + 1, rest.end());
    if (!separated) reject_misplaced_flags(app, argc, argv, program_at, o.program_args);
    run_python_scripts_with_interpreter(o);
  }
  for (const auto& [name, opt] : c.opts) {
    if (opt->count() == 0) continue;
    c.given.insert(name);
    for (const std::string& v : opt->results()) {
      if (takes_value(opt) && v.empty())
        throw ValueError(opt->get_name() + " has an empty value: give one or leave the option out");
    }
  }
  apply_torchrun_master(c);
  apply_token_file(c);
  o.log_ranks = launch::parse_console_ranks(c.log_ranks);
  o.grace_period = env::parse_duration(c.grace, "--grace_period");
  o.restart_backoff = env::parse_duration(c.restart_backoff, "--restart_backoff");
  o.rendezvous_timeout = env::parse_duration(c.rendezvous_timeout, "--rendezvous_timeout");
  o.node_timeout = env::parse_duration(c.node_timeout, "--node_timeout");
  if (c.cpu_affinity != "on" && c.cpu_affinity != "off") {
    throw ValueError("--cpu_affinity='" + c.cpu_affinity + "': expected 'on' or 'off'");
  }
  o.cpu_affinity = c.cpu_affinity == "on";
  if (c.worker_stdio != "tty" && c.worker_stdio != "pipe") {
    throw ValueError("--worker_stdio='" + c.worker_stdio + "': expected 'tty' or 'pipe'");
  }
  o.worker_tty = c.worker_stdio == "tty";
  launch::apply_environment(&o, c.given);
  launch::validate(o);
}

int run_launch_command(int argc, char** argv) {
  CLI::App app{
      "Start the workers of a data-parallel job on this node (Paddle's distributed.launch).\n"
      "crew launch [OPTIONS] PROGRAM [ARGS...]: the options come before PROGRAM; after it, everything "
      "is the program's.",
      "crew launch"};
  app.prefix_command();  // everything from PROGRAM on belongs to the program
  LaunchCommandLine c;
  add_options(app, c);
  try {
    const int program_at = check_launcher_args(app, argc, argv);
    try {
      app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
      if (e.get_exit_code() == 0) return app.exit(e);  // --help
      std::cerr << "crew launch: " << e.what() << " (see crew launch --help)\n";
      return kUsageError;
    }
    finish_options(app, argc, argv, program_at, c);
  } catch (const Error& e) {
    std::cerr << "crew launch: " << e.what() << "\n";
    return kUsageError;
  }
  return launch::run_launch(c.o);
}

}  // namespace

CREW_REGISTER_SUBCOMMAND(launch, "start the workers of a data-parallel job (Paddle's distributed.launch)",
                         run_launch_command);

}  // namespace crew::tools
