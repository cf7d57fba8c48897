// Runs the distributed examples as real multi-rank jobs: forks one process per rank with the
// launcher's environment (CREW_RANK, CREW_WORLD_SIZE, CREW_MASTER, CREW_STORE_HOSTED=1; the
// store is hosted here on an OS-chosen port), execs the example binary, and checks each rank's
// output. Examples are found in CREW_EXAMPLES_DIR, else <this binary's dir>/../bin; when they
// are not built the tests are skipped (the smoke.* ctest entries require them).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "crew/distributed/store/tcp_store.h"

namespace crew::dist {
namespace {

namespace fs = std::filesystem;

fs::path examples_dir() {
  if (const char* dir = std::getenv("CREW_EXAMPLES_DIR")) return dir;
  return fs::read_symlink("/proc/self/exe").parent_path().parent_path() / "bin";
}

struct RankOutput {
  int exit_code = -1;
  std::string text;  // stdout and stderr
};

// Runs `binary args...` as `world` ranks; kills them all after `timeout`.
std::vector<RankOutput> run_job(const fs::path& binary, const std::vector<std::string>& args, int world,
                                std::chrono::seconds timeout = std::chrono::seconds(60)) {
  TCPStoreOptions options;
  options.is_server = true;
  options.port = 0;
  TCPStore server("127.0.0.1", options);
  const std::string master = "127.0.0.1:" + std::to_string(server.port());
  const fs::path out_dir = fs::temp_directory_path() / ("crew_examples_" + std::to_string(::getpid()));
  fs::create_directories(out_dir);
  std::vector<pid_t> pids;
  for (int r = 0; r < world; ++r) {
    const std::string out_file = (out_dir / ("rank" + std::to_string(r) + ".txt")).string();
    pid_t pid = ::fork();
    if (pid == 0) {
      int fd = ::open(out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      ::setenv("CREW_RANK", std::to_string(r).c_str(), 1);
      ::setenv("CREW_WORLD_SIZE", std::to_string(world).c_str(), 1);
      ::setenv("CREW_MASTER", master.c_str(), 1);
      ::setenv("CREW_STORE_HOSTED", "1", 1);
      ::setenv("CREW_TIMEOUT", "30s", 1);
      std::vector<char*> argv{const_cast<char*>(binary.c_str())};
      for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      ::execv(binary.c_str(), argv.data());
      ::_exit(127);
    }
    pids.push_back(pid);
  }
  std::vector<RankOutput> outputs(world);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (int r = 0; r < world; ++r) {
    int status = 0;
    while (::waitpid(pids[r], &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        for (pid_t p : pids) ::kill(p, SIGKILL);
        ::waitpid(pids[r], &status, 0);
        ADD_FAILURE() << "rank " << r << " did not finish within " << timeout.count() << " s";
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    outputs[r].exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  for (int r = 0; r < world; ++r) {
    std::ifstream in(out_dir / ("rank" + std::to_string(r) + ".txt"));
    std::stringstream ss;
    ss << in.rdbuf();
    outputs[r].text = ss.str();
  }
  fs::remove_all(out_dir);
  return outputs;
}

fs::path example_or_skip(const std::string& name) {
  fs::path p = examples_dir() / name;
  return fs::exists(p) ? p : fs::path();
}

TEST(ParallelExamples, AllGatherObjectThreeRanks) {
  fs::path bin = example_or_skip("all_gather_object");
  if (bin.empty()) GTEST_SKIP() << "example all_gather_object is not built in " << examples_dir();
  auto outputs = run_job(bin, {}, 3);
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(outputs[r].exit_code, 0) << outputs[r].text;
    EXPECT_NE(outputs[r].text.find("[{'foo': [1, 2, 3]}, {'bar': [4, 5, 6]}, {'bar': [4, 5, 6]}]\n"),
              std::string::npos)
        << "rank " << r << ":\n"
        << outputs[r].text;
    EXPECT_EQ(outputs[r].text.find("not a parallel execution environment"), std::string::npos);
  }
}

TEST(ParallelExamples, IsInitializedFourRanks) {
  fs::path bin = example_or_skip("is_initialized");
  if (bin.empty()) GTEST_SKIP() << "example is_initialized is not built in " << examples_dir();
  auto outputs = run_job(bin, {}, 4);
  for (int r = 0; r < 4; ++r) EXPECT_EQ(outputs[r].exit_code, 0) << outputs[r].text;
  const std::string& three = outputs[3].text;
  const auto before = three.find("ID:3 False\n");
  const auto after = three.find("ID:3 True\n");
  EXPECT_NE(before, std::string::npos) << three;
  EXPECT_NE(after, std::string::npos) << three;
  EXPECT_LT(before, after) << three;
  for (int r = 0; r < 3; ++r) EXPECT_EQ(outputs[r].text.find("ID:"), std::string::npos) << outputs[r].text;
}

}  // namespace
}  // namespace crew::dist
