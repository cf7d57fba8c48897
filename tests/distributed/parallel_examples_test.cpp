// Runs the distributed examples as real multi-rank jobs: forks one process per rank with the
// launcher's environment (CREW_RANK, CREW_WORLD_SIZE, CREW_MASTER, CREW_STORE_HOSTED=1; the
// store is hosted here on an OS-chosen port), execs the example binary, and checks each rank's
// output. Examples are found in CREW_EXAMPLES_DIR, else <this binary's dir>/../bin; when they
// are not built the tests are skipped (the smoke.* ctest entries require them).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "crew/distributed/store/tcp_store.h"
#include "tests/testing/multiprocess.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/text.h"

namespace crew::dist {
namespace {

namespace fs = std::filesystem;

fs::path examples_dir() {
  if (const char* dir = std::getenv("CREW_EXAMPLES_DIR")) return dir;
  return fs::read_symlink("/proc/self/exe").parent_path().parent_path() / "bin";
}

struct RankOutput {
  testing::RankResult result;
  std::string text;  // stdout and stderr
};

// Runs `binary args...` as `world` ranks (testing::run_ranks: all are killed after `timeout`).
std::vector<RankOutput> run_job(const fs::path& binary, const std::vector<std::string>& args, int world,
                                std::chrono::seconds timeout = std::chrono::seconds(60)) {
  TCPStoreOptions options;
  options.is_server = true;
  options.insecure = true;
  options.port = 0;
  TCPStore server("127.0.0.1", options);
  testing::TempDir out_dir;
  testing::RunRanksOptions ro;
  ro.timeout = timeout;
  ro.env = {{"CREW_MASTER", "127.0.0.1:" + std::to_string(server.port())},
            {"CREW_STORE_HOSTED", "1"},
            {"CREW_TIMEOUT", "30s"}};
  auto results = testing::run_ranks(
      world,
      [&](int rank, int) {
        ::setenv("CREW_RANK", std::to_string(rank).c_str(), 1);
        ::setenv("CREW_WORLD_SIZE", std::to_string(world).c_str(), 1);
        const std::string out_file = out_dir.file("rank" + std::to_string(rank) + ".txt");
        int fd = ::open(out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        ::dup2(fd, 1);
        ::dup2(fd, 2);
        std::vector<char*> argv{const_cast<char*>(binary.c_str())};
        for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
        argv.push_back(nullptr);
        ::execv(binary.c_str(), argv.data());
        ::_exit(127);
      },
      ro);
  std::vector<RankOutput> outputs(world);
  for (int r = 0; r < world; ++r) {
    outputs[r].result = results[r];
    outputs[r].text = testing::read_file(out_dir.file("rank" + std::to_string(r) + ".txt"));
  }
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
    EXPECT_TRUE(outputs[r].result.ok()) << testing::describe(outputs[r].result) << "\n" << outputs[r].text;
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
  for (int r = 0; r < 4; ++r) {
    EXPECT_TRUE(outputs[r].result.ok()) << testing::describe(outputs[r].result) << "\n" << outputs[r].text;
  }
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
