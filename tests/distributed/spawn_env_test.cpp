// The same worker of the same job gets the same environment from crew launch and from spawn:
// both build it with crew::WorkerEnv (crew/core/worker_env.h).
#include <gtest/gtest.h>

#include <map>

#include "crew/core/worker_env.h"
#include "crew/distributed/spawn/spawn.h"
#include "crew/launch/worker_env.h"

namespace crew::dist {
namespace {

std::map<std::string, std::string> as_map(const std::vector<std::string>& env) {
  std::map<std::string, std::string> out;
  for (const auto& e : env) {
    const size_t eq = e.find('=');
    out[e.substr(0, eq)] = e.substr(eq + 1);
  }
  return out;
}

// A one-node launch of `devices` whose store listens at 127.0.0.1:port, as spawn's.
launch::JobLayout one_node_job(int world_size, int port) {
  launch::JobLayout job;
  job.job_id = "samejob";
  job.token = "0123456789abcdef0123456789abcdef";
  job.master_host = "127.0.0.1";
  job.master_port = port;
  job.world_size = world_size;
  job.endpoints = nominal_endpoints({"127.0.0.1"}, {world_size}, port);
  job.log_dir.clear();
  return job;
}

TEST(SpawnEnv, LaunchAndSpawnGiveARankTheSameEnvironment) {
  const std::vector<int> devices = {1, 3, 4};
  const int port = 6170;
  const std::vector<std::string> base = {"PATH=/bin", "HOME=/home/u", "CREW_STORE_HOSTED=0",
                                         "CREW_SPAWN_CHILD=2"};
  for (int rank = 0; rank < 3; ++rank) {
    const WorkerEnv spawned =
        spawn_worker_env(rank, devices, port, "samejob", one_node_job(3, port).token, true);
    launch::WorkerSlot slot;
    slot.local_rank = rank;
    slot.device_id = devices[rank];
    slot.device_index = rank;
    slot.num_threads = spawned.num_threads;
    auto launched = as_map(launch::worker_environment(base, one_node_job(3, port), slot, 3));
    // The one deliberate difference: the launcher reads its workers' output through a pipe
    // or terminal and asks Python not to buffer it; spawn's children share the parent's.
    EXPECT_EQ(launched["PYTHONUNBUFFERED"], "1");
    launched.erase("PYTHONUNBUFFERED");
    EXPECT_EQ(launched, as_map(worker_environment(base, spawned))) << "rank " << rank;
  }
}

TEST(SpawnEnv, PythonSpawnsChildrenHostTheirOwnStore) {
  const WorkerEnv w = spawn_worker_env(0, {0, 1}, 6170, "py", "tok", false);
  const auto env = as_map(worker_environment({"CREW_STORE_HOSTED=1"}, w));
  EXPECT_EQ(env.count("CREW_STORE_HOSTED"), 0u) << "rank 0 hosts: an enclosing launcher's marker must go";
  EXPECT_EQ(env.at("CREW_RANK"), "0");
  EXPECT_EQ(env.at("CREW_MASTER"), "127.0.0.1:6170");
}

}  // namespace
}  // namespace crew::dist
