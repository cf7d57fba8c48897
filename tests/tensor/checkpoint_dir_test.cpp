// crew::dist checkpoint directories: layout, keep-last-K, newest complete, corrupt/truncated/
// missing checkpoints skipped with the file and the reason, no broken "complete" checkpoint.
#include "crew/tensor/checkpoint_dir.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>

#include "crew/core/error.h"
#include "tests/testing/corrupt_file.h"
#include "tests/testing/temp_dir.h"

namespace crew {
namespace {

namespace fs = std::filesystem;

std::map<std::string, StateDict> parts_of(double value) {
  StateDict model;
  model.insert("w", Tensor::full({2, 3}, value));
  StateDict state;
  state.insert("epoch", Tensor::scalar(value, DType::INT64));
  return {{"model", model}, {"state", state}};
}

double model_value(const LoadedCheckpoint& c) { return c.parts.at("model").at("w").to_vector<float>()[0]; }

std::string part_file(const std::string& dir, int64_t step, const std::string& name) {
  return (fs::path(dir) / checkpoint_dir_name(step) / name).string();
}

void truncate_file(const std::string& path) { fs::resize_file(path, fs::file_size(path) / 2); }

using crew::testing::flip_last_byte;

TEST(CheckpointDir, WritesLoadsAndKeepsTheLastK) {
  testing::TempDir tmp;
  const std::string dir = tmp.file("ckpt");
  EXPECT_FALSE(load_newest_checkpoint(dir).has_value());  // no directory yet
  for (int64_t step : {10, 20, 30, 40}) {
    write_checkpoint(dir, step, parts_of(static_cast<double>(step)), {{"epoch", std::to_string(step / 10)}},
                     {.keep = 2});
  }
  EXPECT_EQ(list_checkpoints(dir), (std::vector<int64_t>{40, 30}));
  auto newest = load_newest_checkpoint(dir);
  ASSERT_TRUE(newest.has_value());
  EXPECT_EQ(newest->step, 40);
  EXPECT_EQ(model_value(*newest), 40.0);
  EXPECT_EQ(newest->metadata, (std::map<std::string, std::string>{{"epoch", "4"}}));
  EXPECT_EQ(newest->parts.at("state").at("epoch").dtype(), DType::INT64);
  // Rewriting a step replaces it.
  write_checkpoint(dir, 40, parts_of(41.0), {}, {.keep = 2});
  EXPECT_EQ(model_value(*load_newest_checkpoint(dir)), 41.0);
  EXPECT_EQ(checkpoint_dir_name(120), "step-000000000120");
}

TEST(CheckpointDir, CorruptTruncatedOrIncompleteCheckpointsAreSkippedWithTheReason) {
  testing::TempDir tmp;
  const std::string dir = tmp.file("ckpt");
  for (int64_t step : {1, 2, 3, 4, 5})
    write_checkpoint(dir, step, parts_of(static_cast<double>(step)), {}, {.keep = 5});
  flip_last_byte(part_file(dir, 5, "model.safetensors"));  // bad checksum
  truncate_file(part_file(dir, 4, "state.safetensors"));   // truncated
  fs::remove(part_file(dir, 3, "model.safetensors"));      // missing part
  fs::remove(part_file(dir, 2, "MANIFEST.safetensors"));   // never finished
  std::vector<std::string> skipped;
  auto newest = load_newest_checkpoint(dir, &skipped);
  ASSERT_TRUE(newest.has_value());
  EXPECT_EQ(newest->step, 1);
  EXPECT_EQ(model_value(*newest), 1.0);
  ASSERT_EQ(skipped.size(), 4u);
  EXPECT_NE(skipped[0].find("step-000000000005"), std::string::npos) << skipped[0];
  EXPECT_NE(skipped[0].find("model.safetensors"), std::string::npos) << skipped[0];
  EXPECT_NE(skipped[0].find("checksum"), std::string::npos) << skipped[0];
  EXPECT_NE(skipped[1].find("state.safetensors"), std::string::npos) << skipped[1];
  EXPECT_NE(skipped[2].find("model.safetensors"), std::string::npos) << skipped[2];
  EXPECT_NE(skipped[3].find("MANIFEST.safetensors"), std::string::npos) << skipped[3];
  EXPECT_THROW(load_checkpoint(dir, 5), ValueError);
}

// Pruning removes a checkpoint only when `keep` newer ones verify; one that does not verify
// (corrupt, or never finished) is kept and does not count.
TEST(CheckpointDir, PruneNeverRemovesAnUnverifiedCheckpoint) {
  testing::TempDir tmp;
  const std::string dir = tmp.file("ckpt");
  for (int64_t step : {10, 20})
    write_checkpoint(dir, step, parts_of(static_cast<double>(step)), {}, {.keep = 2});
  flip_last_byte(part_file(dir, 20, "model.safetensors"));
  write_checkpoint(dir, 30, parts_of(30.0), {}, {.keep = 2});
  // Only 30 and 10 verify: nothing is superseded yet, and the corrupt 20 stays.
  EXPECT_EQ(list_checkpoints(dir), (std::vector<int64_t>{30, 20, 10}));
  write_checkpoint(dir, 40, parts_of(40.0), {}, {.keep = 2});
  EXPECT_EQ(list_checkpoints(dir), (std::vector<int64_t>{40, 30, 20}));
  // An unfinished one (no manifest) stays too; 40, superseded by 50 with keep 1, goes.
  fs::remove(part_file(dir, 30, "MANIFEST.safetensors"));
  write_checkpoint(dir, 50, parts_of(50.0), {}, {.keep = 1});
  EXPECT_EQ(list_checkpoints(dir), (std::vector<int64_t>{50, 30, 20}));
  EXPECT_THROW(load_checkpoint(dir, 20), ValueError);
  EXPECT_EQ(load_newest_checkpoint(dir)->step, 50);
}

TEST(CheckpointDir, ACrashBeforeTheRenameLeavesNoCompleteCheckpoint) {
  testing::TempDir tmp;
  const std::string dir = tmp.file("ckpt");
  write_checkpoint(dir, 7, parts_of(7.0));
  // What a writer killed before its rename leaves: a full temporary directory.
  fs::copy(fs::path(dir) / checkpoint_dir_name(7), fs::path(dir) / ".tmp-step-000000000008-1");
  EXPECT_EQ(list_checkpoints(dir), (std::vector<int64_t>{7}));
  EXPECT_EQ(load_newest_checkpoint(dir)->step, 7);
  write_checkpoint(dir, 9, parts_of(9.0));  // prunes the leftover
  EXPECT_FALSE(fs::exists(fs::path(dir) / ".tmp-step-000000000008-1"));
  EXPECT_EQ(list_checkpoints(dir), (std::vector<int64_t>{9, 7}));
}

// A write that fails (here a file-size limit, as a full disk: write() fails with EFBIG) used
// to leave its .tmp-step-* directory behind, so each retry on a full disk took more space.
// The child process writes under RLIMIT_FSIZE; nothing of its attempt may remain.
TEST(CheckpointDir, AFailedWriteLeavesNoTemporaryDirectory) {
  testing::TempDir tmp;
  const std::string dir = tmp.file("ckpt");
  write_checkpoint(dir, 1, parts_of(1.0));
  StateDict big;
  big.insert("w", Tensor::zeros({1 << 16}));  // 256 KiB, over the 64 KiB limit
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::signal(SIGXFSZ, SIG_IGN);
    struct rlimit lim {
      64 << 10, 64 << 10
    };
    ::setrlimit(RLIMIT_FSIZE, &lim);
    try {
      write_checkpoint(dir, 2, {{"model", big}});
    } catch (const IOError&) {
      ::_exit(0);
    } catch (...) {
      ::_exit(2);
    }
    ::_exit(1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the child's write did not fail with IOError";
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename().string());
  EXPECT_EQ(names, (std::vector<std::string>{checkpoint_dir_name(1)}));
}

// Checkpoints are the owner's: a directory write_checkpoint creates is 0700, each step
// directory 0700 and each file 0600, whatever the umask.
TEST(CheckpointDir, CheckpointsAreNotReadableByOthers) {
  testing::TempDir tmp;
  const std::string dir = tmp.file("ckpt");
  const mode_t old_umask = ::umask(022);
  write_checkpoint(dir, 3, parts_of(3.0));
  ::umask(old_umask);
  auto mode = [](const fs::path& p) {
    struct stat st {};
    EXPECT_EQ(::stat(p.c_str(), &st), 0) << p;
    return st.st_mode & 0777;
  };
  EXPECT_EQ(mode(dir), 0700u);
  EXPECT_EQ(mode(fs::path(dir) / checkpoint_dir_name(3)), 0700u);
  for (const auto& entry : fs::directory_iterator(fs::path(dir) / checkpoint_dir_name(3))) {
    EXPECT_EQ(mode(entry.path()), 0600u) << entry.path();
  }
}

TEST(CheckpointDir, RejectsBadArguments) {
  testing::TempDir tmp;
  EXPECT_THROW(write_checkpoint(tmp.path(), -1, parts_of(1.0)), ValueError);
  EXPECT_THROW(write_checkpoint(tmp.path(), 1, parts_of(1.0), {}, {.keep = 0}), ValueError);
  EXPECT_THROW(write_checkpoint(tmp.path(), 1, {}), ValueError);
  EXPECT_THROW(write_checkpoint(tmp.path(), 1, {{"../x", StateDict{}}}), ValueError);
  EXPECT_THROW(write_checkpoint(tmp.path(), 1, {{"MANIFEST", StateDict{}}}), ValueError);
}

}  // namespace
}  // namespace crew
