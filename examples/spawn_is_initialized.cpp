// The seed's third demo: is_initialized before and after init_parallel_env, in processes
// started by dist.spawn(train, args=(3,)); only the process whose rank equals the argument
// prints.
//
//   bin/spawn_is_initialized            # 4 processes, as on the seed's 4-device machine
//   ID:3 False
//   ID:3 True
#include <CLI/CLI.hpp>
#include <cstdio>

#include "crew/distributed/parallel/parallel.h"
#include "crew/distributed/spawn/spawn.h"
#include "tools/cli_checks.h"

namespace dist = crew::dist;

void train(int gpu_id) {
  if (gpu_id == dist::get_rank()) {
    std::printf("ID:%d %s\n", gpu_id, dist::is_initialized() ? "True" : "False");
    std::fflush(stdout);
  }
  dist::init_parallel_env();
  if (gpu_id == dist::get_rank()) {
    std::printf("ID:%d %s\n", gpu_id, dist::is_initialized() ? "True" : "False");
    std::fflush(stdout);
  }
}

int main(int argc, char** argv) {
  CLI::App app{"dist.spawn demo: is_initialized before and after init_parallel_env"};
  dist::SpawnOptions options;
  options.nprocs = 4;
  int id = 3;
  app.add_option("--nprocs", options.nprocs, "processes (default 4; -1: one per CPU core)")
      ->check(crew::cli::at_least(options.nprocs, -1));
  app.add_option("--id", id, "the rank that prints (the seed's args=(3,))")
      ->check(crew::cli::at_least(id, 0));
  if (auto rc = crew::cli::parse(app, argc, argv, "spawn_is_initialized")) return *rc;
  try {
    dist::spawn(train, id, options);
  } catch (const crew::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
