// launch_option_table(): every option is one row that the command line, the environment
// (CREW_LAUNCH_<OPTION> for every row, as docs/launch.md promises), validation and the
// configuration block all read.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>

#include "crew/core/error.h"
#include "crew/launch/option_table.h"
#include "tests/launch/launch_test_util.h"

namespace crew::launch::testing {
namespace {

using ::testing::HasSubstr;

// Sets (or unsets) variables for one scope, restoring what was there.
class ScopedEnv {
 public:
  ScopedEnv(std::initializer_list<std::pair<std::string, std::optional<std::string>>> vars) {
    for (const auto& [name, value] : vars) {
      const char* old = std::getenv(name.c_str());
      saved_.push_back({name, old ? std::optional<std::string>(old) : std::nullopt});
      value ? ::setenv(name.c_str(), value->c_str(), 1) : ::unsetenv(name.c_str());
    }
  }
  ~ScopedEnv() {
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
      it->second ? ::setenv(it->first.c_str(), it->second->c_str(), 1) : ::unsetenv(it->first.c_str());
    }
  }

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

// A value other than the default for every row, and how the configuration block shows it. A
// row added without one fails EveryOptionIsSettableByItsEnvironmentName.
const std::map<std::string, std::pair<std::string, std::string>> kSamples = {
    {"devices", {"2,3", "2,3"}},
    {"nproc_per_node", {"3", "3"}},
    {"nnodes", {"2", "2"}},
    {"master", {"10.0.0.1:7000", "10.0.0.1:7000"}},
    {"rank", {"1", "1"}},
    {"host", {"10.0.0.9", "10.0.0.9"}},
    {"job_id", {"fromenv", "fromenv"}},
    {"log_dir", {"/tmp/envlogs", "/tmp/envlogs"}},
    {"log_level", {"DEBUG", "DEBUG"}},
    {"log_overwrite", {"1", "True"}},
    {"log_ranks", {"all", "all"}},
    {"max_restart", {"2", "2"}},
    {"restart_backoff", {"250ms", "250ms"}},
    {"grace_period", {"2s", "2s"}},
    {"rendezvous_timeout", {"90s", "90s"}},
    {"node_timeout", {"1m", "1m"}},
    {"cpu_affinity", {"off", "off"}},
    {"worker_stdio", {"pipe", "pipe"}},
    {"token", {"envsecret", ""}},
};

// The option as the configuration block shows it (the token, never shown there: itself).
std::string shown(const LaunchOptionSpec& spec, const LaunchOptions& o) {
  return spec.show ? spec.show(o) : o.token;
}

std::string error_of(const std::string& variable, const std::string& value) {
  ScopedEnv env{{variable, value}, {"CREW_RANK", std::nullopt}};
  LaunchOptions o;
  try {
    apply_environment(&o, {});
  } catch (const ValueError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(LaunchOptionTable, EveryOptionIsSettableByItsEnvironmentName) {
  for (const LaunchOptionSpec& spec : launch_option_table()) {
    ASSERT_TRUE(kSamples.count(spec.name)) << spec.name << ": add a sample value to kSamples";
    const auto& [text, show] = kSamples.at(spec.name);
    ScopedEnv env{{env_name(spec), text}, {"CREW_RANK", std::nullopt}};
    LaunchOptions o;
    const std::vector<std::string> used = apply_environment(&o, {});
    EXPECT_EQ(shown(spec, o), spec.show ? show : text) << env_name(spec);
    EXPECT_NE(shown(spec, o), shown(spec, LaunchOptions{}))
        << env_name(spec) << ": the sample is the default";
    const std::string record = env_name(spec) + "=" + (spec.show ? text : "(hidden)");
    EXPECT_NE(std::find(used.begin(), used.end(), record), used.end()) << record;
  }
  EXPECT_EQ(env_name(launch_option_table().front()), "CREW_LAUNCH_DEVICES");
}

TEST(LaunchOptionTable, TheCommandLineWinsOverTheEnvironment) {
  for (const LaunchOptionSpec& spec : launch_option_table()) {
    ScopedEnv env{{env_name(spec), kSamples.at(spec.name).first}, {"CREW_RANK", std::nullopt}};
    LaunchOptions o;
    EXPECT_TRUE(apply_environment(&o, {spec.name}).empty()) << spec.name;
    EXPECT_EQ(shown(spec, o), shown(spec, LaunchOptions{})) << spec.name;
  }
}

TEST(LaunchOptionTable, BadValuesNameTheVariable) {
  EXPECT_THAT(error_of("CREW_LAUNCH_NNODES", "0"), HasSubstr("CREW_LAUNCH_NNODES must be >= 1, got 0"));
  EXPECT_THAT(error_of("PADDLE_NNODES", "x"), HasSubstr("PADDLE_NNODES='x' is not an integer"));
  EXPECT_THAT(error_of("CREW_LAUNCH_MAX_RESTART", "-1"), HasSubstr("CREW_LAUNCH_MAX_RESTART must be >= 0"));
  EXPECT_THAT(error_of("CREW_LAUNCH_CPU_AFFINITY", "maybe"),
              HasSubstr("CREW_LAUNCH_CPU_AFFINITY='maybe': expected 'on' or 'off'"));
  EXPECT_THAT(error_of("CREW_LAUNCH_WORKER_STDIO", "file"),
              HasSubstr("CREW_LAUNCH_WORKER_STDIO='file': expected 'tty' or 'pipe'"));
  EXPECT_THAT(error_of("CREW_LAUNCH_RENDEZVOUS_TIMEOUT", "soon"),
              HasSubstr("CREW_LAUNCH_RENDEZVOUS_TIMEOUT='soon' is not a duration"));
  EXPECT_THAT(error_of("CREW_LAUNCH_NODE_TIMEOUT", "100ms"),
              HasSubstr("CREW_LAUNCH_NODE_TIMEOUT must be at least 1s"));
  EXPECT_THAT(error_of("CREW_LAUNCH_LOG_RANKS", "x"), HasSubstr("CREW_LAUNCH_LOG_RANKS='x': expected 'all'"));
  EXPECT_THAT(error_of("CREW_LAUNCH_DEVICES", "0,x"), HasSubstr("CREW_LAUNCH_DEVICES"));
  EXPECT_THAT(error_of("PADDLE_LOG_OVERWRITE", "maybe"), HasSubstr("PADDLE_LOG_OVERWRITE='maybe'"));
}

TEST(LaunchOptionTable, InsideAWorkerTheParentJobsVariablesAreIgnored) {
  ScopedEnv env{
      {"CREW_RANK", "0"}, {"PADDLE_NNODES", "2"}, {"CREW_JOB_TOKEN", "parent"}, {"PADDLE_TRAINER_ID", "1"}};
  LaunchOptions o;
  EXPECT_TRUE(apply_environment(&o, {}).empty());
  EXPECT_EQ(o.nnodes, 1);
  EXPECT_EQ(o.rank, -1);
  EXPECT_EQ(o.token, "");
}

TEST(LaunchOptionTable, ValidationAndTheConfigurationBlockReadTheRows) {
  LaunchOptions o;
  o.program = "x";
  EXPECT_NO_THROW(validate(o));
  auto error = [](LaunchOptions bad) -> std::string {
    try {
      validate(bad);
    } catch (const ValueError& e) {
      return e.what();
    }
    return "(no error)";
  };
  LaunchOptions bad = o;
  bad.max_restart = -1;
  EXPECT_THAT(error(bad), HasSubstr("--max_restart must be >= 0, got -1"));
  bad = o;
  bad.nproc_per_node = 0;
  EXPECT_THAT(error(bad), HasSubstr("--nproc_per_node must be >= 1, got 0"));
  bad = o;
  bad.rendezvous_timeout = std::chrono::milliseconds(-1);
  EXPECT_THAT(error(bad), HasSubstr("--rendezvous_timeout must not be negative"));
  const auto block = describe(LaunchOptions{});
  for (const LaunchOptionSpec& spec : launch_option_table()) {
    const bool printed =
        std::any_of(block.begin(), block.end(), [&](const auto& kv) { return kv.first == spec.name; });
    EXPECT_EQ(printed, spec.show != nullptr) << spec.name;
  }
  EXPECT_EQ(format_duration(std::chrono::minutes(5)), "5m");
  EXPECT_EQ(format_duration(std::chrono::milliseconds(1500)), "1500ms");
  EXPECT_EQ(format_duration(std::chrono::milliseconds(0)), "0ms");
}

TEST(LaunchOptionTable, TheNewEnvironmentFormsReachARealLaunch) {
  TempDir dir;
  CrewRun r = run_crew(dir, {"launch", "--log_dir", dir.file("log"), "/bin/true"},
                       {"CREW_LAUNCH_CPU_AFFINITY=off", "CREW_LAUNCH_WORKER_STDIO=pipe",
                        "CREW_LAUNCH_RENDEZVOUS_TIMEOUT=90s"});
  ASSERT_EQ(r.code, 0) << r.output;
  for (const char* line : {"cpu_affinity: off", "worker_stdio: pipe", "rendezvous_timeout: 90s"}) {
    EXPECT_THAT(r.stderr_text, HasSubstr(line));
  }
  CrewRun c = run_crew(dir, {"launch", "--worker_stdio", "tty", "--log_dir", dir.file("log"), "/bin/true"},
                       {"CREW_LAUNCH_WORKER_STDIO=pipe"});
  ASSERT_EQ(c.code, 0) << c.output;
  EXPECT_THAT(c.stderr_text, HasSubstr("worker_stdio: tty"));
}

}  // namespace
}  // namespace crew::launch::testing
