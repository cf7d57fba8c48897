// `crew bench NAME [ARGS...]`: runs the benchmark program bin/NAME_bench (or bin/NAME) that is
// installed beside the `crew` command, e.g.
//   crew bench collectives --backend shm,gloo --sizes 4:64M --op all_reduce
//   crew launch --devices=0,1 crew bench collectives      # ranks from the launcher
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "tools/subcommand.h"

namespace {

const char* const kBenchmarks[] = {"collectives", "allreduce", "train_step", "loader", "launch", "store"};

int run_bench(int argc, char** argv) {
  const std::filesystem::path dir = std::filesystem::read_symlink("/proc/self/exe").parent_path();
  if (argc < 2 || std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h") {
    std::cout << "usage: crew bench NAME [ARGS...]   (NAME --help for its options)\nbenchmarks:";
    for (const char* name : kBenchmarks) std::cout << ' ' << name;
    std::cout << std::endl;
    return argc < 2 ? 2 : 0;
  }
  const std::string name = argv[1];
  for (const std::string candidate : {name + "_bench", name}) {
    const std::filesystem::path program = dir / candidate;
    if (!std::filesystem::exists(program)) continue;
    std::vector<char*> args;
    std::string program_str = program.string();
    args.push_back(program_str.data());
    for (int i = 2; i < argc; ++i) args.push_back(argv[i]);
    args.push_back(nullptr);
    ::execv(program_str.c_str(), args.data());
    std::cerr << "crew bench: cannot run " << program_str << ": " << std::strerror(errno) << std::endl;
    return 127;
  }
  std::cerr << "crew bench: no benchmark '" << name << "' in " << dir.string() << " (known:";
  for (const char* n : kBenchmarks) std::cerr << ' ' << n;
  std::cerr << ")" << std::endl;
  return 2;
}

}  // namespace

CREW_REGISTER_SUBCOMMAND(bench, "run a benchmark program installed beside crew (collectives, train_step, ...)",
                         run_bench);
