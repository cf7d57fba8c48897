// Restart with resume, nothing lost: `crew launch --max_restart 1` over examples/train_cnn with
// --checkpoint-dir, one worker SIGKILLed mid-epoch after a checkpoint (CREW_FAULT_KILL_AT_STEP),
// compared with an uninterrupted run of the same seed: the per-step losses after the resume
// point and the test accuracies must be equal (as text: bit for bit). Also: a corrupted newest
// checkpoint is skipped with its reason and the one before it is used.
//
// Data: a tiny Fashion-MNIST-format set (IDX files, 160 training and 40 test images) written
// here; 2 ranks x batch 8 give 10 steps per epoch, 2 epochs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "crew/tensor/checkpoint_dir.h"
#include "tests/launch/idx_test_data.h"
#include "tests/launch/launch_test_util.h"

namespace crew::launch::testing {
namespace {

using std::chrono::seconds;

constexpr int kTrainImages = 160, kTestImages = 40;
constexpr int kStepsPerEpoch = 10, kEpochs = 2;

// The raw value after `"key": ` in a JSON line (up to the next ',' or '}').
std::string field(const std::string& line, const std::string& key) {
  const std::string needle = "\"" + key + "\": ";
  size_t p = line.find(needle);
  if (p == std::string::npos) return "";
  p += needle.size();
  return line.substr(p, line.find_first_of(",}", p) - p);
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// The text after "final test accuracy " up to the end of its number.
std::string final_accuracy(const std::string& output) {
  const std::string needle = "final test accuracy ";
  size_t p = output.rfind(needle);
  if (p == std::string::npos) return "";
  p += needle.size();
  return output.substr(p, output.find_first_not_of("0123456789.", p) - p);
}

struct Metrics {
  std::map<int, std::string> steps;     // by step (the last line for it)
  std::map<int, std::string> accuracy;  // test_accuracy by epoch
};

// Metrics lines after the last "resume" line (all of them when there is none).
Metrics metrics_after_resume(const std::string& path, int* resume_step) {
  std::vector<std::string> lines = lines_of(read_file(path));
  size_t begin = 0;
  *resume_step = -1;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (field(lines[i], "type") == "\"resume\"") {
      begin = i + 1;
      *resume_step = std::stoi(field(lines[i], "step"));
    }
  }
  Metrics m;
  for (size_t i = begin; i < lines.size(); ++i) {
    const std::string type = field(lines[i], "type");
    if (type == "\"step\"") m.steps[std::stoi(field(lines[i], "step"))] = lines[i];
    if (type == "\"epoch\"")
      m.accuracy[std::stoi(field(lines[i], "epoch"))] = field(lines[i], "test_accuracy");
  }
  return m;
}

class ResumeFault : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
#ifdef CREW_TRAIN_CNN_PATH
    dir_ = new TempDir();
    data_ = dir_->file("data");
    std::filesystem::create_directories(data_);
    write_idx_set(data_, "train", kTrainImages, 11);
    write_idx_set(data_, "t10k", kTestImages, 23);
    reference_ = new CrewRun(train(*dir_, "reference", {}));
#endif
  }
  static void TearDownTestSuite() {
    delete reference_;
    delete dir_;
    reference_ = nullptr;
    dir_ = nullptr;
  }
  void SetUp() override {
#ifndef CREW_TRAIN_CNN_PATH
    GTEST_SKIP() << "examples/train_cnn is not built (CREW_BUILD_EXAMPLES=OFF)";
#endif
    ASSERT_EQ(reference_->code, 0) << reference_->output;
  }

  // `crew launch [launch_args] --devices 0,1 train_cnn ...` writing <name>.jsonl and
  // checkpoints into <name>.ckpt, logs into <name>.log.
  static CrewRun train(const TempDir& dir, const std::string& name,
                       const std::vector<std::string>& launch_args,
                       const std::vector<std::string>& train_args = {},
                       const std::vector<std::string>& env = {}) {
    std::vector<std::string> args = {"launch", "--devices", "0,1", "--log_dir", dir.file(name + ".log")};
    args.insert(args.end(), launch_args.begin(), launch_args.end());
#ifdef CREW_TRAIN_CNN_PATH
    args.push_back(CREW_TRAIN_CNN_PATH);
#endif
    for (const char* a :
         {"--dataset", "fashion-mnist", "--batch-size", "8", "--epochs", "2", "--seed", "5", "--num-workers",
          "1", "--threads", "1", "--log-every", "5", "--checkpoint-every", "4"}) {
      args.push_back(a);
    }
    for (const std::string& a :
         {std::string("--data-dir"), data_, std::string("--checkpoint-dir"), dir.file(name + ".ckpt"),
          std::string("--metrics"), dir.file(name + ".jsonl")}) {
      args.push_back(a);
    }
    args.insert(args.end(), train_args.begin(), train_args.end());
    std::vector<std::string> full_env = {"CREW_TIMEOUT=60s"};
    full_env.insert(full_env.end(), env.begin(), env.end());
    return run_crew(dir, args, full_env, seconds(150));
  }

  // Every step line from `from` on equals the reference's, and so do the test accuracies.
  static void expect_same_as_reference(const std::string& name, int from) {
    int none = 0;
    const Metrics ref = metrics_after_resume(dir_->file("reference.jsonl"), &none);
    int resumed_at = 0;
    const Metrics got = metrics_after_resume(dir_->file(name + ".jsonl"), &resumed_at);
    EXPECT_EQ(resumed_at, from);
    ASSERT_EQ(ref.steps.size(), static_cast<size_t>(kEpochs * kStepsPerEpoch));
    ASSERT_EQ(got.steps.size(), ref.steps.size() - static_cast<size_t>(from));
    for (const auto& [step, line] : got.steps) {
      ASSERT_TRUE(ref.steps.count(step)) << line;
      EXPECT_EQ(line, ref.steps.at(step)) << "step " << step << " after the resume differs";
    }
    ASSERT_EQ(got.accuracy.count(kEpochs - 1), 1u);
    EXPECT_EQ(got.accuracy.at(kEpochs - 1), ref.accuracy.at(kEpochs - 1));
  }

  static TempDir* dir_;
  static std::string data_;
  static CrewRun* reference_;
};

TempDir* ResumeFault::dir_ = nullptr;
std::string ResumeFault::data_;
CrewRun* ResumeFault::reference_ = nullptr;

TEST_F(ResumeFault, WorkerKilledMidEpochIsRestartedFromTheLastCheckpointWithNothingLost) {
  EXPECT_EQ(count(reference_->stderr_text, "Restarting the job"), 0);
  EXPECT_EQ(reference_->output.find("resumed from"), std::string::npos) << reference_->output;

  // Checkpoints after steps 4, 8, 12, ...; rank 1 dies before step 14 (epoch 1, batch 4).
  CrewRun r = train(*dir_, "killed", {"--max_restart", "1"}, {}, {"CREW_FAULT_KILL_AT_STEP=14"});
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(count(r.stderr_text, "Restarting the job"), 1) << r.stderr_text;
  EXPECT_NE(r.stderr_text.find("Container rank 1"), std::string::npos) << r.stderr_text;
  EXPECT_NE(r.stderr_text.find("signal SIGKILL (9)"), std::string::npos) << r.stderr_text;
  EXPECT_NE(read_file(dir_->file("killed.log/workerlog.1"))
                .find("fault injection: rank 1 kills itself (SIGKILL) before step 14"),
            std::string::npos);
  const std::string ckpt = dir_->file("killed.ckpt");
  EXPECT_EQ(count(r.output, "resumed from " + ckpt + "/step-000000000012 (epoch 1, batch 2)"), 1) << r.output;
  EXPECT_EQ(final_accuracy(r.output), final_accuracy(reference_->output)) << r.output;
  EXPECT_FALSE(final_accuracy(r.output).empty());
  expect_same_as_reference("killed", 12);
  std::vector<std::string> kept;  // --checkpoint-keep 3 (the default): the newest three
  for (const auto& e : std::filesystem::directory_iterator(ckpt))
    kept.push_back(e.path().filename().string());
  std::sort(kept.begin(), kept.end());
  EXPECT_EQ(kept, (std::vector<std::string>{"step-000000000012", "step-000000000016", "step-000000000020"}));
  // The checkpoint resumed from: its position and both ranks' generator states.
  const LoadedCheckpoint resumed_from = load_checkpoint(ckpt, 12);
  const StateDict& state = resumed_from.parts.at("train_state");
  const Tensor& pos = state.at("position");
  ASSERT_EQ(pos.numel(), 3);
  EXPECT_EQ(std::vector<int64_t>(pos.data<int64_t>(), pos.data<int64_t>() + 3),
            (std::vector<int64_t>{12, 1, 2}));
  EXPECT_GT(state.at("rng.rank0").numel(), 0);
  EXPECT_GT(state.at("rng.rank1").numel(), 0);
  EXPECT_EQ(resumed_from.metadata.at("world_size"), "2");

  // The first attempt got to step 13 (rank 0 logs a step once its gradients are averaged).
  std::vector<std::string> first_attempt;
  for (const std::string& l : lines_of(read_file(dir_->file("killed.jsonl")))) {
    if (field(l, "type") == "\"resume\"") break;
    if (field(l, "type") == "\"step\"") first_attempt.push_back(field(l, "step"));
  }
  ASSERT_FALSE(first_attempt.empty());
  EXPECT_EQ(first_attempt.back(), "13");
}

// A hang instead of a crash: rank 1 stops before step 14 (CREW_FAULT_HANG_AT_STEP) while
// rank 0 waits in that step's all_reduce. With CREW_HANG_ACTION=abort rank 0's watchdog logs
// the report after CREW_HANG_TIMEOUT and exits with 124; the launcher stops rank 1 and
// restarts the group, which resumes from step 12 as after a crash (CREW_TIMEOUT is 60 s here,
// so only the watchdog can end the hang quickly).
TEST_F(ResumeFault, HungWorkerIsEndedByTheWatchdogAndTheGroupResumes) {
  CrewRun r = train(*dir_, "hung", {"--max_restart", "1"}, {},
                    {"CREW_FAULT_HANG_AT_STEP=14", "CREW_HANG_TIMEOUT=5s", "CREW_HANG_ACTION=abort"});
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(count(r.stderr_text, "Restarting the job"), 1) << r.stderr_text;
  EXPECT_NE(r.stderr_text.find("exit code 124"), std::string::npos) << r.stderr_text;
  EXPECT_NE(read_file(dir_->file("hung.log/workerlog.1"))
                .find("fault injection: rank 1 stops (hangs) before step 14"),
            std::string::npos);
  const std::string log0 = read_file(dir_->file("hung.log/workerlog.0"));
  EXPECT_NE(log0.find("behind: rank 1 has not issued"), std::string::npos) << log0;
  EXPECT_NE(log0.find("CREW_HANG_ACTION=abort: exiting with code 124"), std::string::npos) << log0;
  EXPECT_EQ(
      count(r.output, "resumed from " + dir_->file("hung.ckpt") + "/step-000000000012 (epoch 1, batch 2)"), 1)
      << r.output;
  EXPECT_EQ(final_accuracy(r.output), final_accuracy(reference_->output)) << r.output;
  expect_same_as_reference("hung", 12);
}

TEST_F(ResumeFault, CorruptNewestCheckpointIsSkippedAndThePreviousOneUsed) {
  // A first run stops after 7 steps: checkpoints after steps 4 and 7 (the end of the run).
  CrewRun first = train(*dir_, "corrupt", {}, {"--max-steps", "7"});
  ASSERT_EQ(first.code, 0) << first.output;
  const std::string ckpt = dir_->file("corrupt.ckpt");
  const std::string model = ckpt + "/step-000000000007/model.safetensors";
  ASSERT_TRUE(std::filesystem::exists(ckpt + "/step-000000000004/MANIFEST.safetensors"));
  {
    // Flip one bit of the last weight byte.
    std::fstream f(model, std::ios::in | std::ios::out | std::ios::binary);
    ASSERT_TRUE(f.good()) << model;
    f.seekg(-1, std::ios::end);
    char c = 0;
    f.get(c);
    f.seekp(-1, std::ios::end);
    f.put(static_cast<char>(c ^ 0x10));
  }
  CrewRun second = train(*dir_, "corrupt", {});
  ASSERT_EQ(second.code, 0) << second.output;
  EXPECT_NE(second.output.find("skipped checkpoint step-000000000007: load '" + model + "'"),
            std::string::npos)
      << second.output;
  EXPECT_NE(second.output.find("checksum mismatch"), std::string::npos) << second.output;
  EXPECT_EQ(count(second.output, "resumed from " + ckpt + "/step-000000000004 (epoch 0, batch 4)"), 1)
      << second.output;
  EXPECT_EQ(final_accuracy(second.output), final_accuracy(reference_->output)) << second.output;
  expect_same_as_reference("corrupt", 4);
}

}  // namespace
}  // namespace crew::launch::testing
