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
#include "crew/launch/option_table.h"
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

// The command line as parsed: the options, the text of each table option, and which were given.
struct LaunchCommandLine {
  launch::LaunchOptions o;
  std::map<std::string, std::string> texts;  // by table name, converted by the row's set()
  std::string token_file;
  std::string master_addr;  // torchrun's --master-addr / --master-port, joined into --master
  std::string master_port;
  std::map<std::string, CLI::Option*> opts;
  std::set<std::string> given;
};

// One flag per row of launch_option_table(), its default shown as the configuration block
// shows LaunchOptions{}'s.
CLI::Option* add_table_option(CLI::App& app, const launch::LaunchOptionSpec& spec, LaunchCommandLine& c) {
  using Kind = launch::LaunchOptionSpec::Kind;
  if (spec.kind == Kind::FLAG) return app.add_flag(spec.flags, spec.help);
  CLI::Option* opt = app.add_option(spec.flags, c.texts[spec.name], spec.help);
  if (spec.kind == Kind::INT) opt->type_name("INT")->check(cli::at_least(int{}, spec.min));
  const std::string shown = spec.show ? spec.show(launch::LaunchOptions{}) : "";
  if (shown != "None") opt->default_str(shown);
  return opt;
}

void add_options(CLI::App& app, LaunchCommandLine& c) {
  auto& opts = c.opts;
  for (const launch::LaunchOptionSpec& spec : launch::launch_option_table()) {
    opts[spec.name] = add_table_option(app, spec, c);
  }
  // Other spellings of table options: torchrun's halves of --master, a file holding --token.
  opts["master_addr"] =
      app.add_option("--master-addr,--master_addr", c.master_addr,
                     "torchrun's form of --master's HOST (default 127.0.0.1 when --master-port is given)");
  opts["master_port"] =
      app.add_option("--master-port,--master_port", c.master_port,
                     "torchrun's form of --master's PORT (default 29500 when --master-addr is given)");
  opts["token_file"] = app.add_option("--token-file,--token_file", c.token_file,
                                      "read the job token from this file (mode 0600)");
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
  for (const launch::LaunchOptionSpec& spec : launch::launch_option_table()) {
    if (!c.given.count(spec.name)) continue;
    const bool flag = spec.kind == launch::LaunchOptionSpec::Kind::FLAG;
    spec.set(o, flag ? "true" : c.texts[spec.name], launch::flag_name(spec));
  }
  apply_torchrun_master(c);
  apply_token_file(c);
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
