// `crew launch` end to end with /bin/sh workers: environment, logs, console, exit codes.
#include <gtest/gtest.h>

#include <sched.h>

#include "tests/launch/launch_test_util.h"

namespace crew::launch::testing {
namespace {

const char* kPrintEnv =
    "echo \"rank=$CREW_RANK world=$CREW_WORLD_SIZE local=$CREW_LOCAL_RANK/$CREW_LOCAL_WORLD_SIZE "
    "dev=$CREW_DEVICE_ID paddle=$PADDLE_TRAINER_ID/$PADDLE_TRAINERS_NUM/$PADDLE_LOCAL_RANK "
    "hosted=$CREW_STORE_HOSTED restart=$CREW_RESTART_COUNT sel=$FLAGS_selected_cpus backend=$PADDLE_DISTRI_BACKEND\"; "
    "echo \"master=$CREW_MASTER paddle_master=$PADDLE_MASTER\"; echo to-stderr-$CREW_RANK >&2";

TEST(LaunchRun, FourWorkersGetTheirEnvironmentAndLogs) {
  TempDir dir;
  const std::string log = dir.file("log");
  CrewRun r = run_crew(dir, {"launch", "--devices=0,1,2,3", "--log_dir", log, "--job_id", "envtest", "/bin/sh", "-c",
                             kPrintEnv});
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.stderr_text.find("-----------  Configuration  ----------------------"), std::string::npos);
  EXPECT_NE(r.stderr_text.find("devices: 0,1,2,3"), std::string::npos);
  EXPECT_NE(r.stderr_text.find("Job: envtest"), std::string::npos);
  EXPECT_NE(r.stderr_text.find("replicas 4, status ready"), std::string::npos);
  EXPECT_NE(r.stderr_text.find("Pod completed"), std::string::npos);
  EXPECT_NE(r.stderr_text.find("Exit code 0"), std::string::npos);
  // The console shows local rank 0 only, stdout and stderr alike.
  EXPECT_NE(r.stdout_text.find("rank=0 world=4"), std::string::npos) << r.stdout_text;
  EXPECT_NE(r.stdout_text.find("to-stderr-0"), std::string::npos);
  EXPECT_EQ(r.stdout_text.find("rank=1"), std::string::npos);
  std::string master;
  for (int i = 0; i < 4; ++i) {
    const std::string w = read_file(log + "/workerlog." + std::to_string(i));
    const std::string n = std::to_string(i);
    EXPECT_NE(w.find("rank=" + n + " world=4 local=" + n + "/4 dev=" + n + " paddle=" + n + "/4/" + n +
                     " hosted=1 restart=0 sel=" + n + " backend=gloo"),
              std::string::npos)
        << w;
    EXPECT_NE(w.find("to-stderr-" + n), std::string::npos);
    size_t m = w.find("master=");
    ASSERT_NE(m, std::string::npos);
    std::string line = w.substr(m, w.find('\n', m) - m);
    if (master.empty()) master = line;
    EXPECT_EQ(line, master) << "every worker must see the same store address";
    const std::string env = read_file(log + "/envlog." + n);
    EXPECT_NE(env.find("CREW_RANK=" + n + "\n"), std::string::npos);
    EXPECT_NE(env.find("PADDLE_TRAINER_ENDPOINTS="), std::string::npos);
    EXPECT_LT(env.find("CREW_JOB_ID="), env.find("CREW_RANK=")) << "envlog is sorted";
  }
  EXPECT_NE(master.find("master=127.0.0.1:"), std::string::npos) << master;
  EXPECT_EQ(master.find(":0 "), std::string::npos) << "the store port must be the bound one";
}

TEST(LaunchRun, OneWorkerAndItsExitCodeZero) {
  TempDir dir;
  CrewRun r = run_crew(dir, {"launch", "--nproc_per_node", "1", "--log_dir", dir.file("log"), "/bin/sh", "-c",
                             "echo only-$CREW_RANK-of-$CREW_WORLD_SIZE"});
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.stdout_text.find("only-0-of-1"), std::string::npos);
}

TEST(LaunchRun, LogRanksAllPrefixesEveryRank) {
  TempDir dir;
  CrewRun r = run_crew(dir, {"launch", "--devices=0,1,2", "--log_ranks", "all", "--log_dir", dir.file("log"),
                             "/bin/sh", "-c", "echo hello $CREW_RANK; printf 'no newline'"});
  ASSERT_EQ(r.code, 0) << r.output;
  for (int i = 0; i < 3; ++i) {
    const std::string n = std::to_string(i);
    EXPECT_NE(r.stdout_text.find("[rank " + n + "] hello " + n + "\n"), std::string::npos) << r.stdout_text;
    EXPECT_NE(r.stdout_text.find("[rank " + n + "] no newline\n"), std::string::npos) << r.stdout_text;
  }
}

TEST(LaunchRun, ProgramArgumentsPassThroughUntouched) {
  TempDir dir;
  // Launcher flags among them need the '--' before the program (else they are an error).
  CrewRun r = run_crew(dir, {"launch", "--nproc_per_node", "1", "--log_dir", dir.file("log"), "--",
                             "/bin/echo", "--devices=9", "--log_dir", "x", "-c"});
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.stdout_text.find("--devices=9 --log_dir x -c"), std::string::npos) << r.stdout_text;
}

TEST(LaunchRun, WorkerLogsAppendAcrossRunsAndTheTailShowsOnlyThisRun) {
  TempDir dir;
  const std::string log = dir.file("log");
  ASSERT_EQ(run_crew(dir, {"launch", "--nproc_per_node", "1", "--log_dir", log, "/bin/sh", "-c", "echo first"}).code,
            0);
  CrewRun r = run_crew(dir, {"launch", "--nproc_per_node", "1", "--log_dir", log, "/bin/sh", "-c",
                             "echo second; exit 4"});
  EXPECT_EQ(r.code, 4);
  EXPECT_NE(read_file(log + "/workerlog.0").find("first\nsecond\n"), std::string::npos);
  EXPECT_EQ(r.stderr_text.find("first"), std::string::npos) << "the error tail must not replay an old run";
  EXPECT_NE(r.stderr_text.find("second"), std::string::npos);
}

TEST(LaunchRun, EnvironmentFormsOfTheOptions) {
  TempDir dir;
  CrewRun r = run_crew(dir, {"launch", "--log_dir", dir.file("log"), "/bin/sh", "-c", "echo w$CREW_WORLD_SIZE"},
                       {"PADDLE_NPROC_PER_NODE=2", "CREW_LAUNCH_JOB_ID=fromenv"});
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.stdout_text.find("w2"), std::string::npos);
  EXPECT_NE(r.stderr_text.find("job_id: fromenv"), std::string::npos);
  // The command line wins over the environment.
  CrewRun c = run_crew(dir, {"launch", "--nproc_per_node", "1", "--log_dir", dir.file("log"), "/bin/sh", "-c",
                             "echo w$CREW_WORLD_SIZE"},
                       {"PADDLE_NPROC_PER_NODE=3"});
  ASSERT_EQ(c.code, 0) << c.output;
  EXPECT_NE(c.stdout_text.find("w1"), std::string::npos);
}

std::string allowed_cpus(const std::string& log) {
  size_t p = log.find("Cpus_allowed_list:");
  if (p == std::string::npos) return "";
  size_t start = log.find_first_not_of(" \t", p + 18);
  return log.substr(start, log.find('\n', start) - start);
}

TEST(LaunchRun, CpuWorkersArePinnedToTheirShareOfTheCores) {
  cpu_set_t set;
  CPU_ZERO(&set);
  ASSERT_EQ(::sched_getaffinity(0, sizeof(set), &set), 0);
  const int cores = CPU_COUNT(&set);
  TempDir dir;
  const char* script = "grep Cpus_allowed_list /proc/self/status; echo threads=$CREW_NUM_THREADS/$OMP_NUM_THREADS";
  CrewRun r = run_crew(dir, {"launch", "--devices=0,1", "--log_dir", dir.file("on"), "/bin/sh", "-c", script});
  ASSERT_EQ(r.code, 0) << r.output;
  const std::string w0 = read_file(dir.file("on/workerlog.0"));
  const std::string w1 = read_file(dir.file("on/workerlog.1"));
  const std::string t = std::to_string(std::max(1, cores / 2));
  EXPECT_NE(w0.find("threads=" + t + "/" + t), std::string::npos) << w0;
  if (cores >= 2) EXPECT_NE(allowed_cpus(w0), allowed_cpus(w1)) << w0 << w1;
  // Off: both inherit the launcher's mask; an explicit CREW_NUM_THREADS wins.
  CrewRun off = run_crew(dir, {"launch", "--devices=0,1", "--cpu_affinity", "off", "--log_dir", dir.file("off"),
                               "/bin/sh", "-c", script},
                         {"CREW_NUM_THREADS=7"});
  ASSERT_EQ(off.code, 0) << off.output;
  const std::string o0 = read_file(dir.file("off/workerlog.0"));
  EXPECT_EQ(allowed_cpus(o0), allowed_cpus(read_file(dir.file("off/workerlog.1"))));
  EXPECT_NE(o0.find("threads=7/"), std::string::npos) << o0;
}

TEST(LaunchRun, ALaunchInsideAWorkerStartsItsOwnJob) {
  TempDir dir;
  const std::string inner = std::string(CREW_CLI_PATH) + " launch --nproc_per_node 1 --log_dir " + dir.file("inner") +
                            " /bin/sh -c 'echo inner world=$CREW_WORLD_SIZE nnodes=$CREW_NNODES master=$CREW_MASTER'";
  CrewRun r = run_crew(dir, {"launch", "--devices=0,1", "--log_dir", dir.file("outer"), "/bin/sh", "-c",
                             "echo outer master=$CREW_MASTER; [ $CREW_RANK = 1 ] || " + inner});
  ASSERT_EQ(r.code, 0) << r.output;
  const std::string out = r.stdout_text;
  size_t o = out.find("outer master=");
  size_t i = out.find("inner world=1 nnodes=1 master=");
  ASSERT_NE(o, std::string::npos) << out;
  ASSERT_NE(i, std::string::npos) << out;
  const std::string outer_master = out.substr(o + 13, out.find('\n', o) - o - 13);
  const std::string inner_master = out.substr(i + 30, out.find('\n', i) - i - 30);
  EXPECT_NE(outer_master, inner_master) << "the nested launch must serve its own store";
}

TEST(LaunchRun, TokenReachesTheWorkers) {
  TempDir dir;
  CrewRun r = run_crew(dir, {"launch", "--nproc_per_node", "1", "--token", "s3cret", "--log_dir", dir.file("log"),
                             "/bin/sh", "-c", "echo token=$CREW_JOB_TOKEN"});
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.stdout_text.find("token=s3cret"), std::string::npos) << r.stdout_text;
}

}  // namespace
}  // namespace crew::launch::testing
