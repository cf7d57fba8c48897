// The launcher's worker environment: every ParallelEnv variable comes from to_env() and reads
// back as the worker's ParallelEnv; the launcher-only variables are added beside them.
#include "crew/launch/worker_env.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <map>

namespace crew::launch {
namespace {

JobLayout two_node_layout() {
  JobLayout job;
  job.job_id = "envjob";
  job.token = "tok";
  job.master_host = "10.0.0.1";
  job.master_port = 6170;
  job.nnodes = 2;
  job.node_rank = 1;
  job.world_size = 4;
  job.rank_offset = 2;
  job.restart_count = 1;
  job.endpoints = nominal_endpoints({"10.0.0.1", "10.0.0.2"}, {2, 2}, 6170);
  job.log_dir = "/tmp/logs";
  return job;
}

WorkerSlot second_slot() {
  WorkerSlot slot;
  slot.local_rank = 1;
  slot.device_id = 5;
  slot.device_index = 1;
  slot.num_threads = 3;
  return slot;
}

std::map<std::string, std::string> as_map(const std::vector<std::string>& env) {
  std::map<std::string, std::string> out;
  for (const auto& e : env) {
    const size_t eq = e.find('=');
    out[e.substr(0, eq)] = e.substr(eq + 1);
  }
  return out;
}

TEST(WorkerEnv, DescribesTheWorkersSlotInTheJob) {
  const ParallelEnv w = worker_parallel_env(two_node_layout(), second_slot(), 2);
  EXPECT_EQ(w.source, "crew");
  EXPECT_EQ(w.rank, 3);
  EXPECT_EQ(w.world_size, 4);
  EXPECT_EQ(w.local_rank, 1);
  EXPECT_EQ(w.local_world_size, 2);
  EXPECT_EQ(w.node_rank, 1);
  EXPECT_EQ(w.nnodes, 2);
  EXPECT_EQ(w.device_id, 5) << "a CPU worker's device is its CPU slot";
  EXPECT_EQ(w.device_kind, "cpu");
  EXPECT_EQ(w.master_endpoint(), "10.0.0.1:6170");
  EXPECT_EQ(w.job_id, "envjob");
  EXPECT_EQ(w.job_token, "tok");
  EXPECT_EQ(w.restart_count, 1);
  EXPECT_EQ(w.trainer_endpoints.size(), 4u);
  JobLayout gpu = two_node_layout();
  gpu.device_kind = DeviceKind::GPU;
  EXPECT_EQ(worker_parallel_env(gpu, second_slot(), 2).device_id, 1) << "a GPU worker's is the visible index";
}

TEST(WorkerEnv, ParallelVariablesAreToEnvsAndTheLauncherAddsItsOwn) {
  const JobLayout job = two_node_layout();
  const auto env = as_map(worker_environment({"KEEP=1", "PATH=/bin"}, job, second_slot(), 2));
  for (const EnvVar& v : worker_parallel_env(job, second_slot(), 2).to_env()) {
    if (v.value.empty()) {
      EXPECT_EQ(env.count(v.name), 0u) << v.name << " (empty = unset)";
    } else {
      EXPECT_EQ(env.at(v.name), v.value) << v.name;
    }
  }
  EXPECT_EQ(env.at("KEEP"), "1");
  EXPECT_EQ(env.at("CREW_STORE_HOSTED"), "1");
  EXPECT_EQ(env.at("CREW_NUM_THREADS"), "3");
  EXPECT_EQ(env.at("OMP_NUM_THREADS"), "3");
  EXPECT_EQ(env.at("PADDLE_LOG_DIR"), "/tmp/logs");
  EXPECT_EQ(env.at("PADDLE_CURRENT_ENDPOINT"), "10.0.0.2:6174");
  // Thread counts already in the launcher's environment win.
  const auto mine = as_map(worker_environment({"OMP_NUM_THREADS=9"}, job, second_slot(), 2));
  EXPECT_EQ(mine.at("OMP_NUM_THREADS"), "9");
  EXPECT_EQ(mine.at("CREW_NUM_THREADS"), "3");
}

TEST(WorkerEnv, MultiNodeWorkersBindGlooToTheNodesAnnouncedAddress) {
  JobLayout job = two_node_layout();
  job.node_host = "10.0.0.2";
  EXPECT_EQ(as_map(worker_environment({}, job, second_slot(), 2)).at("CREW_HOST"), "10.0.0.2");
  EXPECT_EQ(as_map(worker_environment({"CREW_HOST=192.168.1.5"}, job, second_slot(), 2)).at("CREW_HOST"),
            "192.168.1.5")
      << "the user's choice wins";
  job.nnodes = 1;
  EXPECT_EQ(as_map(worker_environment({}, job, second_slot(), 2)).count("CREW_HOST"), 0u) << "one node: shm/loopback";
}

TEST(WorkerEnv, PinnedWorkersMayRunTransportThreadsOnTheNodesCpus) {
  JobLayout job = two_node_layout();
  job.node_cpus = {0, 1, 2, 3};
  WorkerSlot pinned = second_slot();
  pinned.cpus = {2, 3};
  EXPECT_EQ(as_map(worker_environment({}, job, pinned, 2)).at("CREW_COMM_CPUS"), "0,1,2,3");
  EXPECT_EQ(as_map(worker_environment({}, job, second_slot(), 2)).count("CREW_COMM_CPUS"), 0u) << "not pinned";
  EXPECT_EQ(as_map(worker_environment({"CREW_COMM_CPUS=none"}, job, pinned, 2)).at("CREW_COMM_CPUS"), "none");
}

TEST(WorkerEnv, AnOuterJobsTokenDoesNotReachTheWorkers) {
  JobLayout job = two_node_layout();
  job.token.clear();
  const auto env = as_map(worker_environment({"CREW_JOB_TOKEN=outer"}, job, second_slot(), 2));
  EXPECT_EQ(env.count("CREW_JOB_TOKEN"), 0u);
}

TEST(WorkerEnv, TheWorkerReadsItsParallelEnvBack) {
  const JobLayout job = two_node_layout();
  const auto env = worker_environment({}, job, second_slot(), 2);
  std::map<std::string, std::optional<std::string>> saved;
  for (const auto& [name, value] : as_map(env)) {
    const char* old = std::getenv(name.c_str());
    saved[name] = old ? std::optional<std::string>(old) : std::nullopt;
    ::setenv(name.c_str(), value.c_str(), 1);
  }
  const ParallelEnv read = ParallelEnv::from_env();
  for (const auto& [name, value] : saved) {
    if (value) {
      ::setenv(name.c_str(), value->c_str(), 1);
    } else {
      ::unsetenv(name.c_str());
    }
  }
  EXPECT_EQ(read, worker_parallel_env(job, second_slot(), 2));
}

}  // namespace
}  // namespace crew::launch
