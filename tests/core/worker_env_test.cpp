// crew::WorkerEnv, the one owner of a worker's environment beyond ParallelEnv: what it sets,
// what it leaves to the starter's environment, what it never lets through.
#include "crew/core/worker_env.h"

#include <gtest/gtest.h>

#include <map>

namespace crew {
namespace {

std::map<std::string, std::string> as_map(const std::vector<std::string>& env) {
  std::map<std::string, std::string> out;
  for (const auto& e : env) {
    const size_t eq = e.find('=');
    out[e.substr(0, eq)] = e.substr(eq + 1);
  }
  return out;
}

WorkerEnv rank_one() {
  WorkerEnv w;
  w.parallel.source = "crew";
  w.parallel.rank = 1;
  w.parallel.world_size = 2;
  w.parallel.master_addr = "127.0.0.1";
  w.parallel.master_port = 4000;
  w.parallel.job_token = "tok";
  w.num_threads = 3;
  return w;
}

TEST(WorkerEnv, AddsTheStartersVariablesToTheParallelOnes) {
  WorkerEnv w = rank_one();
  w.log_dir = "/logs";
  w.comm_cpus = {0, 1, 2};
  w.host = "10.0.0.2";
  w.python_unbuffered = true;
  const auto env = as_map(worker_environment({"KEEP=1"}, w));
  for (const EnvVar& v : w.parallel.to_env()) {
    if (v.value.empty()) {
      EXPECT_EQ(env.count(v.name), 0u) << v.name;
    } else {
      EXPECT_EQ(env.at(v.name), v.value) << v.name;
    }
  }
  EXPECT_EQ(env.at("KEEP"), "1");
  EXPECT_EQ(env.at("CREW_STORE_HOSTED"), "1");
  EXPECT_EQ(env.at("CREW_NUM_THREADS"), "3");
  EXPECT_EQ(env.at("OMP_NUM_THREADS"), "3");
  EXPECT_EQ(env.at("PADDLE_LOG_DIR"), "/logs");
  EXPECT_EQ(env.at("CREW_COMM_CPUS"), "0,1,2");
  EXPECT_EQ(env.at("CREW_HOST"), "10.0.0.2");
  EXPECT_EQ(env.at("PYTHONUNBUFFERED"), "1");
}

TEST(WorkerEnv, TheStartersOwnChoicesWin) {
  WorkerEnv w = rank_one();
  w.comm_cpus = {0, 1};
  w.host = "10.0.0.2";
  w.python_unbuffered = true;
  const auto env = as_map(worker_environment(
      {"OMP_NUM_THREADS=9", "CREW_COMM_CPUS=none", "CREW_HOST=192.168.1.5", "PYTHONUNBUFFERED="}, w));
  EXPECT_EQ(env.at("OMP_NUM_THREADS"), "9");
  EXPECT_EQ(env.at("CREW_NUM_THREADS"), "3");
  EXPECT_EQ(env.at("CREW_COMM_CPUS"), "none");
  EXPECT_EQ(env.at("CREW_HOST"), "192.168.1.5");
  EXPECT_EQ(env.at("PYTHONUNBUFFERED"), "") << "set but empty is the user's choice too";
}

TEST(WorkerEnv, AnEnclosingJobsMarkersDoNotReachTheWorker) {
  WorkerEnv w = rank_one();
  w.parallel.job_token.clear();
  w.store_hosted = false;  // rank 0 hosts this job's store
  const auto env = as_map(worker_environment({"CREW_STORE_HOSTED=1", "CREW_JOB_TOKEN=outer",
                                              std::string(kSpawnChildVar) + "=0", "PADDLE_LOG_DIR=/x"},
                                             w));
  EXPECT_EQ(env.count("CREW_STORE_HOSTED"), 0u);
  EXPECT_EQ(env.count("CREW_JOB_TOKEN"), 0u);
  EXPECT_EQ(env.count(kSpawnChildVar), 0u)
      << "a crew program the worker runs would take itself for a spawn child";
  EXPECT_EQ(env.at("PADDLE_LOG_DIR"), "/x") << "no log dir given: the starter's stays";
}

}  // namespace
}  // namespace crew
