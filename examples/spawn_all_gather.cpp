// The seed's second demo: dist.spawn(train) where every process gathers one object from each
// rank and prints the list.
//
//   bin/spawn_all_gather --nprocs 4
//   [{'foo': [1, 2, 3]}, {'bar': [4, 5, 6]}, {'bar': [4, 5, 6]}, {'bar': [4, 5, 6]}]   (x4)
#include <CLI/CLI.hpp>
#include <cstdio>
#include <vector>

#include "crew/distributed/collective/object_collectives.h"
#include "crew/distributed/parallel/parallel.h"
#include "crew/distributed/spawn/spawn.h"
#include "tools/cli_checks.h"

namespace dist = crew::dist;

std::vector<dist::Object> all_gather(const dist::Object& obj) {
  std::vector<dist::Object> object_list;
  dist::all_gather_object(object_list, obj);
  return object_list;
}

void train() {
  dist::init_parallel_env();
  dist::Object obj = dist::get_rank() == 0 ? dist::Object::dict({{"foo", dist::Object::list({1, 2, 3})}})
                                           : dist::Object::dict({{"bar", dist::Object::list({4, 5, 6})}});
  std::vector<dist::Object> object_list = all_gather(obj);
  // One write per line, so the processes' lines do not mix.
  std::printf("%s\n", dist::repr(object_list).c_str());
  std::fflush(stdout);
}

int main(int argc, char** argv) {
  CLI::App app{"dist.spawn demo: every process prints the gathered objects"};
  dist::SpawnOptions options;
  app.add_option("--nprocs", options.nprocs, "processes (-1: one per CPU core, as Paddle)")
      ->check(crew::cli::at_least(options.nprocs, -1));
  app.add_option("--devices,--gpus", options.devices, "device ids, e.g. 1,3");
  if (auto rc = crew::cli::parse(app, argc, argv, "spawn_all_gather")) return *rc;
  try {
    dist::spawn(train, options);
  } catch (const crew::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
