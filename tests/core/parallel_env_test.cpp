// ParallelEnv::from_env: which launcher's variables win, the fallbacks of each field, the
// errors; ParallelEnv::to_env round-trips every field.
#include "crew/core/parallel_env.h"
#include "crew/core/scheduler_master.h"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <map>
#include <optional>
#include <string>

#include "crew/core/error.h"

namespace crew {
namespace {

// Every variable from_env reads; the fixture clears them and restores them afterwards.
const char* const kVariables[] = {"CREW_RANK",
                                  "CREW_WORLD_SIZE",
                                  "CREW_LOCAL_RANK",
                                  "CREW_LOCAL_WORLD_SIZE",
                                  "PADDLE_TRAINER_ID",
                                  "PADDLE_TRAINERS_NUM",
                                  "PADDLE_LOCAL_RANK",
                                  "PADDLE_RANK_IN_NODE",
                                  "PADDLE_LOCAL_SIZE",
                                  "RANK",
                                  "WORLD_SIZE",
                                  "LOCAL_RANK",
                                  "LOCAL_WORLD_SIZE",
                                  "OMPI_COMM_WORLD_RANK",
                                  "OMPI_COMM_WORLD_SIZE",
                                  "OMPI_COMM_WORLD_LOCAL_RANK",
                                  "OMPI_COMM_WORLD_LOCAL_SIZE",
                                  "SLURM_PROCID",
                                  "SLURM_NTASKS",
                                  "SLURM_LOCALID",
                                  "SLURM_NTASKS_PER_NODE",
                                  "SLURM_STEP_NODELIST",
                                  "SLURM_JOB_NODELIST",
                                  "SLURM_NODELIST",
                                  "SLURM_JOB_ID",
                                  "SLURM_STEP_ID",
                                  "OMPI_MCA_ess_base_jobid",
                                  "PMIX_NAMESPACE",
                                  "CREW_NNODES",
                                  "PADDLE_NNODES",
                                  "CREW_NODE_RANK",
                                  "GROUP_RANK",
                                  "CREW_DEVICE_ID",
                                  "CREW_DEVICE_KIND",
                                  "FLAGS_selected_gpus",
                                  "FLAGS_selected_cpus",
                                  "CREW_MASTER",
                                  "PADDLE_MASTER",
                                  "MASTER_ADDR",
                                  "MASTER_PORT",
                                  "PADDLE_TRAINER_ENDPOINTS",
                                  "PADDLE_CURRENT_ENDPOINT",
                                  "CREW_JOB_ID",
                                  "PADDLE_JOB_ID",
                                  "CREW_JOB_TOKEN",
                                  "CREW_JOB_TOKEN_FILE",
                                  "CREW_INSECURE_STORE",
                                  "SLURM_STEP_NUM_NODES",
                                  "SLURM_NNODES",
                                  "SLURM_JOB_NUM_NODES",
                                  "CREW_RESTART_COUNT",
                                  "PADDLE_GLOBAL_RANK",
                                  "PADDLE_GLOBAL_SIZE",
                                  "PADDLE_DISTRI_BACKEND"};

class ParallelEnvTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* n : kVariables) {
      if (const char* v = std::getenv(n)) saved_[n] = v;
    }
    clear();
  }
  void TearDown() override {
    clear();
    for (const auto& [n, v] : saved_) ::setenv(n.c_str(), v.c_str(), 1);
  }
  static void clear() {
    for (const char* n : kVariables) ::unsetenv(n);
  }
  static void set(const char* name, const std::string& value) { ::setenv(name, value.c_str(), 1); }

  // The ValueError from_env throws, or nullopt.
  static std::optional<std::string> error() {
    try {
      ParallelEnv::from_env();
    } catch (const ValueError& e) {
      return std::string(e.what());
    }
    return std::nullopt;
  }

 private:
  std::map<std::string, std::string> saved_;
};

TEST_F(ParallelEnvTest, NothingSetIsRankZeroOfOne) {
  const ParallelEnv e = ParallelEnv::from_env();
  EXPECT_EQ(e.source, "default");
  EXPECT_EQ(e, ParallelEnv{});
  EXPECT_FALSE(e.has_master());
}

// One convention's variable names and the values the test gives them.
struct Names {
  const char* source;
  const char* rank;
  const char* world_size;
  const char* local_rank;
  const char* local_world_size;
};
const Names kConventions[] = {
    {"crew", "CREW_RANK", "CREW_WORLD_SIZE", "CREW_LOCAL_RANK", "CREW_LOCAL_WORLD_SIZE"},
    {"paddle", "PADDLE_TRAINER_ID", "PADDLE_TRAINERS_NUM", "PADDLE_LOCAL_RANK", "PADDLE_LOCAL_SIZE"},
    {"torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"},
    {"mpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
     "OMPI_COMM_WORLD_LOCAL_SIZE"},
    {"slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_NTASKS_PER_NODE"},
};

TEST_F(ParallelEnvTest, EachConventionReadsItsOwnNames) {
  for (const Names& c : kConventions) {
    clear();
    set(c.rank, "5");
    set(c.world_size, "8");
    set(c.local_rank, "1");
    set(c.local_world_size, "4");
    const ParallelEnv e = ParallelEnv::from_env();
    EXPECT_EQ(e.source, c.source);
    EXPECT_EQ(e.rank, 5) << c.source;
    EXPECT_EQ(e.world_size, 8) << c.source;
    EXPECT_EQ(e.local_rank, 1) << c.source;
    EXPECT_EQ(e.local_world_size, 4) << c.source;
    EXPECT_EQ(e.device_id, 1) << c.source << ": the device defaults to the local rank";
  }
}

TEST_F(ParallelEnvTest, LocalRankAndSizeDefaultToTheGlobalOnes) {
  for (const Names& c : kConventions) {
    clear();
    set(c.rank, "3");
    set(c.world_size, "6");
    const ParallelEnv e = ParallelEnv::from_env();
    EXPECT_EQ(e.source, c.source);
    EXPECT_EQ(e.local_rank, 3) << c.source;
    EXPECT_EQ(e.local_world_size, 6) << c.source;
  }
}

TEST_F(ParallelEnvTest, TheFirstConventionPresentWins) {
  for (const Names& c : kConventions) {
    set(c.rank, "0");
    set(c.world_size, "2");
  }
  for (const Names& c : kConventions) {
    EXPECT_EQ(ParallelEnv::from_env().source, c.source);
    ::unsetenv(c.rank);
    ::unsetenv(c.world_size);
  }
  EXPECT_EQ(ParallelEnv::from_env().source, "default");
}

TEST_F(ParallelEnvTest, WhichVariablesMakeAConventionPresent) {
  // crew and Paddle: either of rank and world size; the other defaults.
  set("CREW_WORLD_SIZE", "3");
  EXPECT_EQ(ParallelEnv::from_env().source, "crew");
  EXPECT_EQ(ParallelEnv::from_env().rank, 0);
  ::unsetenv("CREW_WORLD_SIZE");
  set("CREW_RANK", "0");
  EXPECT_EQ(ParallelEnv::from_env().world_size, 1);
  ::unsetenv("CREW_RANK");
  set("PADDLE_TRAINERS_NUM", "3");
  EXPECT_EQ(ParallelEnv::from_env().source, "paddle");
  ::unsetenv("PADDLE_TRAINERS_NUM");
  set("PADDLE_TRAINER_ID", "0");
  EXPECT_EQ(ParallelEnv::from_env().source, "paddle");
  ::unsetenv("PADDLE_TRAINER_ID");
  // torchrun and Slurm: both.
  set("RANK", "1");
  set("SLURM_PROCID", "1");
  EXPECT_EQ(ParallelEnv::from_env().source, "default");
  set("SLURM_NTASKS", "2");
  EXPECT_EQ(ParallelEnv::from_env().source, "slurm");
  set("WORLD_SIZE", "2");
  EXPECT_EQ(ParallelEnv::from_env().source, "torchrun");
  // Open MPI: the rank alone (the size defaults to 1).
  clear();
  set("OMPI_COMM_WORLD_RANK", "0");
  EXPECT_EQ(ParallelEnv::from_env().source, "mpi");
  EXPECT_EQ(ParallelEnv::from_env().world_size, 1);
  set("OMPI_COMM_WORLD_SIZE", "1");
  set("SLURM_PROCID", "0");
  set("SLURM_NTASKS", "4");
  EXPECT_EQ(ParallelEnv::from_env().source, "mpi");
}

TEST_F(ParallelEnvTest, PaddleLocalRankThenRankInNode) {
  set("PADDLE_TRAINER_ID", "6");
  set("PADDLE_TRAINERS_NUM", "8");
  set("PADDLE_RANK_IN_NODE", "2");
  EXPECT_EQ(ParallelEnv::from_env().local_rank, 2);
  set("PADDLE_LOCAL_RANK", "1");
  EXPECT_EQ(ParallelEnv::from_env().local_rank, 1);
}

TEST_F(ParallelEnvTest, SlurmTasksPerNodeForms) {
  set("SLURM_PROCID", "1");
  set("SLURM_NTASKS", "8");
  EXPECT_EQ(ParallelEnv::from_env().local_world_size, 8) << "unset: the world size";
  for (const char* form : {"2", "2(x3)", "2(x2),1", "4,4", "3(x1),2(x2)"}) {
    const std::string first(1, form[0]);
    set("SLURM_NTASKS_PER_NODE", form);
    EXPECT_EQ(ParallelEnv::from_env().local_world_size, std::stoi(first)) << form;
  }
}

TEST_F(ParallelEnvTest, MalformedSlurmTasksPerNodeNamesTheVariableAndValue) {
  set("SLURM_PROCID", "0");
  set("SLURM_NTASKS", "4");
  for (const char* bad : {"abc", "2(x3", "0", "2(x0)", "2x3", "2(x3)x", "2,", ",2", "-1", "2(3)", "2,,1"}) {
    set("SLURM_NTASKS_PER_NODE", bad);
    const auto msg = error();
    ASSERT_TRUE(msg.has_value()) << bad << " was accepted";
    EXPECT_NE(msg->find("SLURM_NTASKS_PER_NODE"), std::string::npos) << *msg;
    EXPECT_NE(msg->find(std::string("'") + bad + "'"), std::string::npos) << *msg;
  }
}

TEST_F(ParallelEnvTest, NodesAndNodeRank) {
  set("PADDLE_NNODES", "3");
  set("GROUP_RANK", "2");
  EXPECT_EQ(ParallelEnv::from_env().nnodes, 3);
  EXPECT_EQ(ParallelEnv::from_env().node_rank, 2);
  set("CREW_NNODES", "4");
  set("CREW_NODE_RANK", "1");
  EXPECT_EQ(ParallelEnv::from_env().nnodes, 4);
  EXPECT_EQ(ParallelEnv::from_env().node_rank, 1);
}

TEST_F(ParallelEnvTest, DeviceIdCrewThenSelectedGpusThenCpus) {
  set("CREW_RANK", "1");
  set("CREW_WORLD_SIZE", "4");
  EXPECT_EQ(ParallelEnv::from_env().device_id, 1);
  set("FLAGS_selected_cpus", "5,6");
  EXPECT_EQ(ParallelEnv::from_env().device_id, 5);
  set("FLAGS_selected_gpus", "7");
  EXPECT_EQ(ParallelEnv::from_env().device_id, 7);
  set("CREW_DEVICE_ID", "2");
  EXPECT_EQ(ParallelEnv::from_env().device_id, 2);
  ::unsetenv("CREW_DEVICE_ID");
  set("FLAGS_selected_gpus", "x");
  const auto msg = error();
  ASSERT_TRUE(msg.has_value());
  EXPECT_NE(msg->find("FLAGS_selected_gpus='x'"), std::string::npos) << *msg;
}

TEST_F(ParallelEnvTest, MasterCrewThenPaddleThenTorchrunThenEndpoints) {
  set("PADDLE_TRAINER_ENDPOINTS", "10.0.0.5:7000,10.0.0.6:7001");
  ParallelEnv e = ParallelEnv::from_env();
  EXPECT_EQ(e.master_endpoint(), "10.0.0.5:7000");
  EXPECT_EQ(e.trainer_endpoints, (std::vector<std::string>{"10.0.0.5:7000", "10.0.0.6:7001"}));
  set("MASTER_ADDR", "10.0.0.4");
  EXPECT_EQ(ParallelEnv::from_env().master_endpoint(), "10.0.0.5:7000") << "MASTER_ADDR needs MASTER_PORT";
  set("MASTER_PORT", "6000");
  EXPECT_EQ(ParallelEnv::from_env().master_endpoint(), "10.0.0.4:6000");
  set("PADDLE_MASTER", "10.0.0.3:6170");
  EXPECT_EQ(ParallelEnv::from_env().master_endpoint(), "10.0.0.3:6170");
  set("CREW_MASTER", "[::1]:80");
  e = ParallelEnv::from_env();
  EXPECT_EQ(e.master_addr, "::1");
  EXPECT_EQ(e.master_port, 80);
  EXPECT_EQ(e.trainer_endpoints.size(), 2u) << "the endpoints are read whatever the master";
  set("CREW_MASTER", "nohost");
  const auto msg = error();
  ASSERT_TRUE(msg.has_value());
  EXPECT_NE(msg->find("CREW_MASTER"), std::string::npos) << *msg;
}

TEST_F(ParallelEnvTest, JobIdTokenAndRestartCount) {
  set("PADDLE_JOB_ID", "pjob");
  EXPECT_EQ(ParallelEnv::from_env().job_id, "pjob");
  set("CREW_JOB_ID", "cjob");
  set("CREW_JOB_TOKEN", "secret");
  set("CREW_RESTART_COUNT", "3");
  const ParallelEnv e = ParallelEnv::from_env();
  EXPECT_EQ(e.job_id, "cjob");
  EXPECT_EQ(e.job_token, "secret");
  EXPECT_EQ(e.restart_count, 3);
}

// CREW_JOB_TOKEN_FILE: a file only this user can read gives the token (CREW_JOB_TOKEN wins);
// a file that group or others can read, or another user owns, is a ValueError naming it.
TEST_F(ParallelEnvTest, TokenFileGivesTheTokenOnlyWhenPrivate) {
  char path[] = "/tmp/crew-token-test-XXXXXX";
  const int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, " t0ken\n", 7), 7);
  ::close(fd);
  set("CREW_JOB_TOKEN_FILE", path);
  ASSERT_EQ(::chmod(path, 0600), 0);
  EXPECT_EQ(ParallelEnv::from_env().job_token, "t0ken");
  set("CREW_JOB_TOKEN", "explicit");
  EXPECT_EQ(ParallelEnv::from_env().job_token, "explicit");
  clear();
  set("CREW_JOB_TOKEN_FILE", path);
  ASSERT_EQ(::chmod(path, 0640), 0);
  EXPECT_NE(error().value_or("").find("CREW_JOB_TOKEN_FILE"), std::string::npos);
  EXPECT_NE(error().value_or("").find("mode 0640"), std::string::npos) << error().value_or("");
  ASSERT_EQ(::chmod(path, 0600), 0);
  if (::geteuid() == 0) {  // root can give the file away: another user's token is refused
    ASSERT_EQ(::chown(path, 65534, 65534), 0);
    EXPECT_NE(error().value_or("").find("not by this user"), std::string::npos) << error().value_or("");
  }
  ::unlink(path);
  clear();
  set("CREW_INSECURE_STORE", "1");
  EXPECT_TRUE(ParallelEnv::from_env().insecure_store) << "CREW_INSECURE_STORE";
}

TEST_F(ParallelEnvTest, InconsistentValuesAreValueErrors) {
  set("CREW_RANK", "4");
  set("CREW_WORLD_SIZE", "4");
  EXPECT_NE(error().value_or("").find("rank 4 is out of range for world size 4"), std::string::npos);
  set("CREW_WORLD_SIZE", "0");
  EXPECT_NE(error().value_or("").find("world size must be >= 1, got 0"), std::string::npos);
  set("CREW_RANK", "0");
  set("CREW_WORLD_SIZE", "2");
  set("CREW_LOCAL_RANK", "-1");
  EXPECT_NE(error().value_or("").find("local rank -1 must not be negative"), std::string::npos);
  set("CREW_LOCAL_RANK", "one");
  EXPECT_NE(error().value_or("").find("CREW_LOCAL_RANK"), std::string::npos);
}

// What a launcher writes for a worker and what the worker reads back.
ParallelEnv sample_worker() {
  ParallelEnv w;
  w.rank = 5;
  w.world_size = 8;
  w.local_rank = 1;
  w.local_world_size = 4;
  w.node_rank = 1;
  w.nnodes = 2;
  w.device_id = 3;
  w.device_kind = "gpu";
  w.master_addr = "10.0.0.1";
  w.master_port = 6170;
  w.job_id = "round-trip";
  w.job_token = "s3cret";
  w.insecure_store = true;
  w.restart_count = 2;
  w.source = "crew";
  w.trainer_endpoints = nominal_endpoints({"10.0.0.1", "10.0.0.2"}, {4, 4}, 6170);
  return w;
}

// Sets `vars` in this process as a launcher sets them in a worker.
void export_env(const std::vector<EnvVar>& vars) {
  for (const EnvVar& v : vars) {
    if (v.value.empty()) {
      ::unsetenv(v.name.c_str());
    } else {
      ::setenv(v.name.c_str(), v.value.c_str(), 1);
    }
  }
}

TEST_F(ParallelEnvTest, ToEnvRoundTripsEveryField) {
  const ParallelEnv w = sample_worker();
  export_env(w.to_env());
  EXPECT_EQ(ParallelEnv::from_env(), w);
  EXPECT_STREQ(std::getenv("FLAGS_selected_gpus"), "3");
  EXPECT_STREQ(std::getenv("PADDLE_CURRENT_ENDPOINT"), "10.0.0.2:6176");
  // A CPU worker without token or endpoints: those variables are unset, not inherited.
  ParallelEnv cpu = w;
  cpu.device_kind = "cpu";
  cpu.job_token.clear();
  cpu.trainer_endpoints.clear();
  export_env(cpu.to_env());
  EXPECT_EQ(ParallelEnv::from_env(), cpu);
  EXPECT_STREQ(std::getenv("FLAGS_selected_cpus"), "3");
  EXPECT_STREQ(std::getenv("PADDLE_DISTRI_BACKEND"), "gloo");
  EXPECT_EQ(std::getenv("CREW_JOB_TOKEN"), nullptr);
  EXPECT_EQ(std::getenv("PADDLE_CURRENT_ENDPOINT"), nullptr);
}

TEST_F(ParallelEnvTest, ToEnvPaddleNamesAloneDescribeTheSameWorker) {
  const ParallelEnv w = sample_worker();
  for (const EnvVar& v : w.to_env()) {
    if (v.name.rfind("CREW_", 0) != 0) ::setenv(v.name.c_str(), v.value.c_str(), 1);
  }
  const ParallelEnv p = ParallelEnv::from_env();
  EXPECT_EQ(p.source, "paddle");
  EXPECT_EQ(p.rank, w.rank);
  EXPECT_EQ(p.world_size, w.world_size);
  EXPECT_EQ(p.local_rank, w.local_rank);
  EXPECT_EQ(p.local_world_size, w.local_world_size);
  EXPECT_EQ(p.nnodes, w.nnodes);
  EXPECT_EQ(p.device_id, w.device_id);
  EXPECT_EQ(p.master_endpoint(), w.master_endpoint());
  EXPECT_EQ(p.job_id, w.job_id);
  EXPECT_EQ(p.trainer_endpoints, w.trainer_endpoints);
}

TEST(ApplyEnv, SetsAndUnsets) {
  std::vector<std::string> env = {"KEEP=1", "CREW_JOB_TOKEN=outer", "CREW_RANK=9"};
  apply_env({{"CREW_RANK", "2"}, {"CREW_JOB_TOKEN", ""}, {"NEW", "x"}}, &env);
  EXPECT_EQ(env, (std::vector<std::string>{"KEEP=1", "CREW_RANK=2", "NEW=x"}));
}

TEST(NominalEndpoints, OnePerRankNodeMajorPortsWrap) {
  EXPECT_EQ(nominal_endpoints({"a", "b"}, {2, 1}, 100),
            (std::vector<std::string>{"a:101", "a:102", "b:103"}));
  EXPECT_EQ(nominal_endpoints({"h"}, {2}, 65534), (std::vector<std::string>{"h:65535", "h:1024"}));
}

TEST(SchedulerMaster, FirstHostOfASlurmHostList) {
  EXPECT_EQ(first_slurm_host("node07"), "node07");
  EXPECT_EQ(first_slurm_host("node[07-09,12],gpu1"), "node07");
  EXPECT_EQ(first_slurm_host("gpu1,node[07-09]"), "gpu1");
  EXPECT_EQ(first_slurm_host("rack[3,5]-n[01-02]"), "rack3-n[01-02]");
  EXPECT_EQ(first_slurm_host("a[002]"), "a002");
}

TEST(SchedulerMaster, PortIsStableAndInRange) {
  EXPECT_EQ(derived_port("slurm:42.0"), derived_port("slurm:42.0"));
  EXPECT_NE(derived_port("slurm:42.0"), derived_port("slurm:42.1"));
  for (int job = 0; job < 200; ++job) {
    const int p = derived_port("mpi:" + std::to_string(job));
    EXPECT_GE(p, 20000);
    EXPECT_LT(p, 40000);
  }
}

TEST_F(ParallelEnvTest, SlurmStepGivesTheMasterWithoutMasterAddr) {
  set("SLURM_PROCID", "1");
  set("SLURM_NTASKS", "2");
  set("SLURM_STEP_NODELIST", "cn[003-004]");
  set("SLURM_JOB_ID", "1234");
  set("SLURM_STEP_ID", "0");
  ParallelEnv e = ParallelEnv::from_env();
  EXPECT_EQ(e.source, "slurm");
  EXPECT_EQ(e.master_addr, "cn003");
  EXPECT_EQ(e.master_port, derived_port("slurm:1234.0"));
  set("MASTER_ADDR", "10.0.0.1");  // explicit variables win
  set("MASTER_PORT", "29500");
  e = ParallelEnv::from_env();
  EXPECT_EQ(e.master_endpoint(), "10.0.0.1:29500");
}

// A one-node Slurm step must not serve its store on the node's routable address.
TEST_F(ParallelEnvTest, OneNodeSlurmStepMeetsOnLoopback) {
  set("SLURM_PROCID", "0");
  set("SLURM_NTASKS", "2");
  set("SLURM_STEP_NODELIST", "cn003");
  set("SLURM_JOB_ID", "1234");
  EXPECT_EQ(ParallelEnv::from_env().master_addr, "127.0.0.1") << "a node list of one host";
  set("SLURM_JOB_NODELIST", "cn[003-004]");
  set("SLURM_STEP_NODELIST", "cn[003-004]");
  set("SLURM_STEP_NUM_NODES", "1");
  EXPECT_EQ(ParallelEnv::from_env().master_addr, "127.0.0.1") << "SLURM_STEP_NUM_NODES=1";
  set("SLURM_STEP_NUM_NODES", "2");
  EXPECT_EQ(ParallelEnv::from_env().master_addr, "cn003");
}

TEST_F(ParallelEnvTest, OpenMpiOnOneHostMeetsOnLoopbackAcrossHostsNeedsAMaster) {
  set("OMPI_COMM_WORLD_RANK", "2");
  set("OMPI_COMM_WORLD_SIZE", "3");
  set("OMPI_COMM_WORLD_LOCAL_RANK", "2");
  set("OMPI_COMM_WORLD_LOCAL_SIZE", "3");
  set("OMPI_MCA_ess_base_jobid", "331546625");
  ParallelEnv e = ParallelEnv::from_env();
  EXPECT_EQ(e.source, "mpi");
  EXPECT_EQ(e.master_endpoint(), "127.0.0.1:" + std::to_string(derived_port("mpi:331546625")));
  set("OMPI_COMM_WORLD_LOCAL_SIZE", "2");  // ranks on two hosts: no host to guess
  EXPECT_FALSE(ParallelEnv::from_env().has_master());
}

}  // namespace
}  // namespace crew
