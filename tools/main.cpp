// `crew SUBCOMMAND [ARGS...]`: dispatches to the subcommands registered in tools/*_cmd.cpp.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>

#include "tools/subcommand.h"

namespace crew::tools {
namespace {

std::map<std::string, Subcommand>& registry() {
  static std::map<std::string, Subcommand> commands;
  return commands;
}

void print_usage(std::FILE* out) {
  std::fprintf(out, "usage: crew SUBCOMMAND [ARGS...]\n\nsubcommands:\n");
  for (const auto& c : subcommands()) std::fprintf(out, "  %-10s %s\n", c.name.c_str(), c.summary.c_str());
  std::fprintf(out, "\n'crew SUBCOMMAND --help' describes a subcommand.\n");
}

}  // namespace

bool register_subcommand(Subcommand command) {
  registry()[command.name] = std::move(command);
  return true;
}

std::vector<Subcommand> subcommands() {
  std::vector<Subcommand> out;
  for (const auto& [name, c] : registry()) out.push_back(c);
  return out;
}

}  // namespace crew::tools

int main(int argc, char** argv) {
  using crew::tools::print_usage;
  if (argc < 2) {
    print_usage(stderr);
    return 2;
  }
  const std::string name = argv[1];
  if (name == "-h" || name == "--help" || name == "help") {
    print_usage(stdout);
    return 0;
  }
  for (const auto& c : crew::tools::subcommands()) {
    if (c.name == name) {
      std::string full = "crew " + name;
      argv[1] = full.data();  // the subcommand sees "crew NAME" as its program name
      return c.run(argc - 1, argv + 1);
    }
  }
  std::fprintf(stderr, "crew: unknown subcommand '%s'\n\n", name.c_str());
  print_usage(stderr);
  return 2;
}
