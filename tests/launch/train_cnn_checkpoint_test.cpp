// examples/train_cnn with --checkpoint-dir in one process, started directly (no launcher), on
// the tiny IDX set of tests/launch/idx_test_data.h (160 images, batch 16: 10 steps an epoch):
// a directory whose every checkpoint fails verification stops the run with each one and its
// reason unless --checkpoint-start-fresh, and the corrupt ones are never pruned; SIGTERM
// during training writes a checkpoint of the step it stopped at and exits with 143.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "crew/tensor/checkpoint_dir.h"
#include "tests/launch/idx_test_data.h"
#include "tests/launch/launch_test_util.h"
#include "tests/testing/corrupt_file.h"

namespace crew::launch::testing {
namespace {

namespace fs = std::filesystem;
using std::chrono::seconds;

// A train_cnn child with stdout and stderr in one file.
class TrainCnnProcess {
 public:
  TrainCnnProcess(const TempDir& dir, const std::string& name, const std::vector<std::string>& args) {
    out_path_ = dir.file(name + ".out");
    int out = ::open(out_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    dist::ChildOptions o;
#ifdef CREW_TRAIN_CNN_PATH
    o.argv = {CREW_TRAIN_CNN_PATH};
#endif
    o.argv.insert(o.argv.end(), args.begin(), args.end());
    o.env = dist::current_environment();
    for (const char* k : {"CREW_RANK", "CREW_WORLD_SIZE", "PADDLE_TRAINER_ID", "PADDLE_TRAINERS_NUM"})
      dist::unset_env_entry(&o.env, k);
    o.stdout_fd = out;
    o.stderr_fd = out;
    child_ = dist::ChildProcess::start(o);
    ::close(out);
  }
  std::string output() const { return read_file(out_path_); }
  void signal(int sig) const { ::kill(child_.pid(), sig); }
  // The exit code (128 + signal for a signal death); on a timeout kills it and fails the test.
  int wait(std::chrono::milliseconds timeout = seconds(120)) {
    if (!child_.wait_for(timeout)) {
      ADD_FAILURE() << "train_cnn did not finish within " << timeout.count() << " ms; killing it";
      child_.terminate(std::chrono::milliseconds(0));
    }
    return child_.status()->shell_code();
  }
  const std::string& out_path() const { return out_path_; }

 private:
  dist::ChildProcess child_;
  std::string out_path_;
};

class TrainCnnCheckpoint : public ::testing::Test {
 protected:
  void SetUp() override {
#ifndef CREW_TRAIN_CNN_PATH
    GTEST_SKIP() << "examples/train_cnn is not built (CREW_BUILD_EXAMPLES=OFF)";
#endif
    fs::create_directories(dir_.file("data"));
    write_idx_set(dir_.file("data"), "train", 160, 11);
    write_idx_set(dir_.file("data"), "t10k", 40, 23);
  }
  // train_cnn's arguments for checkpoints in <dir>/ckpt, then `extra`.
  std::vector<std::string> args(const std::vector<std::string>& extra) const {
    std::vector<std::string> a = {"--dataset",
                                  "fashion-mnist",
                                  "--data-dir",
                                  dir_.file("data"),
                                  "--batch-size",
                                  "16",
                                  "--seed",
                                  "5",
                                  "--num-workers",
                                  "0",
                                  "--threads",
                                  "1",
                                  "--log-every",
                                  "1",
                                  "--checkpoint-every",
                                  "4",
                                  "--checkpoint-dir",
                                  ckpt()};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  }
  // Runs train_cnn to its end; its output in *output.
  int train(const std::string& name, const std::vector<std::string>& extra, std::string* output) {
    TrainCnnProcess p(dir_, name, args(extra));
    const int code = p.wait();
    *output = p.output();
    return code;
  }
  std::string ckpt() const { return dir_.file("ckpt"); }
  std::string part(int64_t step, const std::string& file) const {
    return ckpt() + "/" + checkpoint_dir_name(step) + "/" + file;
  }

  TempDir dir_;
};

using crew::testing::flip_last_byte;

TEST_F(TrainCnnCheckpoint, EveryCheckpointCorruptStopsListingEachUnlessStartFresh) {
  std::string out;
  ASSERT_EQ(train("first", {"--epochs", "1", "--max-steps", "7"}, &out), 0) << out;
  ASSERT_EQ(list_checkpoints(ckpt()), (std::vector<int64_t>{7, 4}));
  flip_last_byte(part(7, "model.safetensors"));
  fs::resize_file(part(4, "optimizer.safetensors"), fs::file_size(part(4, "optimizer.safetensors")) / 2);

  EXPECT_EQ(train("refused", {"--epochs", "1"}, &out), 1) << out;
  EXPECT_NE(out.find("--checkpoint-dir " + ckpt() + ": none of its 2 checkpoint(s) verifies"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("\n  step-000000000007: load '" + part(7, "model.safetensors") + "'"), std::string::npos)
      << out;
  EXPECT_NE(out.find("checksum mismatch"), std::string::npos) << out;
  EXPECT_NE(out.find("\n  step-000000000004: load '" + part(4, "optimizer.safetensors") + "'"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("--checkpoint-start-fresh"), std::string::npos) << out;
  EXPECT_EQ(out.find("batch_id"), std::string::npos) << "no step may run:\n" << out;
  EXPECT_EQ(list_checkpoints(ckpt()), (std::vector<int64_t>{7, 4}));
  EXPECT_TRUE(fs::exists(part(7, "model.safetensors")));

  // --checkpoint-start-fresh trains from step 0; step 4 is rewritten, the corrupt step 7 is kept
  // (never pruned: it does not verify) beside the new 8 and 10.
  ASSERT_EQ(train("fresh", {"--epochs", "1", "--checkpoint-start-fresh"}, &out), 0) << out;
  EXPECT_EQ(out.find("resumed from"), std::string::npos) << out;
  EXPECT_NE(out.find("epoch: 0, batch_id: 0, loss is"), std::string::npos) << out;
  EXPECT_NE(out.find("done: 1 epochs"), std::string::npos) << out;
  // The bar's final line shows the epoch's mean loss beside the last step's.
  EXPECT_NE(out.find("10/10 ["), std::string::npos) << out;
  EXPECT_NE(out.find(", mean="), std::string::npos) << out;
  EXPECT_EQ(list_checkpoints(ckpt()), (std::vector<int64_t>{10, 8, 7, 4}));
  EXPECT_NO_THROW(load_checkpoint(ckpt(), 4));
  EXPECT_THROW(load_checkpoint(ckpt(), 7), ValueError);
}

TEST_F(TrainCnnCheckpoint, SigtermWritesACheckpointOfTheStepItStoppedAtAndExits143) {
  TrainCnnProcess p(dir_, "term", args({"--epochs", "1000"}));
  ASSERT_TRUE(wait_for_text(p.out_path(), "epoch: 0, batch_id: 2,", seconds(60))) << p.output();
  p.signal(SIGTERM);
  EXPECT_EQ(p.wait(), 128 + SIGTERM) << p.output();
  const std::string out = p.output();
  const std::string needle = "train_cnn: stopped by SIGTERM after step ";
  const size_t at = out.find(needle);
  ASSERT_NE(at, std::string::npos) << out;
  const int64_t step = std::stoll(out.substr(at + needle.size()));
  EXPECT_GE(step, 3) << out;  // steps 0, 1 and 2 had run
  EXPECT_NE(out.find(", checkpoint " + ckpt() + "/" + checkpoint_dir_name(step) + " written"),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find("done:"), std::string::npos) << out;
  const std::vector<int64_t> steps = list_checkpoints(ckpt());
  ASSERT_FALSE(steps.empty());
  EXPECT_EQ(steps.front(), step);
  const LoadedCheckpoint c = load_checkpoint(ckpt(), step);
  EXPECT_EQ(c.parts.at("train_state").at("position").data<int64_t>()[0], step);

  // The next run resumes there.
  std::string again;
  ASSERT_EQ(train("again", {"--epochs", "1000", "--max-steps", std::to_string(step + 1)}, &again), 0)
      << again;
  EXPECT_NE(again.find("resumed from " + ckpt() + "/" + checkpoint_dir_name(step)), std::string::npos)
      << again;
}

}  // namespace
}  // namespace crew::launch::testing
