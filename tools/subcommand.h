#pragma once
// The `crew` command's subcommands. Each tools/<name>_cmd.cpp registers itself at static
// initialisation, so adding a subcommand needs no edit elsewhere:
//
//   int run_bench(int argc, char** argv);   // argv[0] is "crew bench"
//   CREW_REGISTER_SUBCOMMAND(bench, "run the collective benchmarks", run_bench);
#include <string>
#include <vector>

namespace crew::tools {

using SubcommandMain = int (*)(int argc, char** argv);

struct Subcommand {
  std::string name;
  std::string summary;
  SubcommandMain run = nullptr;
};

// Adds a subcommand; returns true (for use in a static initialiser).
bool register_subcommand(Subcommand command);
// All registered subcommands, sorted by name.
std::vector<Subcommand> subcommands();

}  // namespace crew::tools

#define CREW_REGISTER_SUBCOMMAND(name, summary, fn)                                      \
  [[maybe_unused]] static const bool crew_subcommand_registered_##name =                 \
      ::crew::tools::register_subcommand(::crew::tools::Subcommand{#name, summary, fn})
