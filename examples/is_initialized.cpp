// The seed's is_initialized demo: the rank named on the command line (default 3) prints
// whether the distributed environment is initialized, before and after init_parallel_env.
//
//   crew launch --nproc_per_node 4 ./is_initialized      # rank 3 prints "ID:3 False", then "ID:3 True"
//   ./is_initialized 0                                   # one process: the warning, "ID:0 False" twice
#include <CLI/CLI.hpp>
#include <iostream>

#include "crew/distributed/distributed.h"
#include "tools/cli_checks.h"

namespace dist = crew::dist;

int main(int argc, char** argv) {
  int gpu_id = 3;
  CLI::App app{"Prints is_initialized() before and after init_parallel_env on one rank"};
  app.add_option("gpu_id", gpu_id, "the rank that prints (default 3)")->check(crew::cli::at_least(gpu_id, 0));
  if (auto rc = crew::cli::parse(app, argc, argv, "is_initialized")) return *rc;
  try {
    auto report = [&] {
      if (gpu_id == dist::get_rank()) {
        std::cout << "ID:" << gpu_id << " " << (dist::is_initialized() ? "True" : "False") << std::endl;
      }
    };
    report();
    dist::init_parallel_env();
    report();
    return 0;
  } catch (const crew::Error& e) {
    std::cerr << "is_initialized: " << e.what() << std::endl;
    return 1;
  }
}
