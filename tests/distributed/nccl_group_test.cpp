// The nccl process group without a GPU: a fake driver (nccl_driver.h) over the fake device
// runs the group's own logic -- backend selection, the unique id through the store,
// non-blocking init with its timeout, the watchdog that aborts a stuck collective, host tensors
// staged through the device -- so that only NCCL itself is left to the gpu label
// (tests/cuda/nccl_test.cpp).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <future>

#include "crew/distributed/backends/backend_unavailable.h"
#include "crew/distributed/backends/nccl/nccl_process_group.h"
#include "crew/distributed/store/hash_store.h"
#include "crew/tensor/device/device.h"
#include "tests/testing/fake_device.h"

namespace crew::dist {
namespace {

using std::chrono::milliseconds;
using testing::FakeDevice;
using ::testing::HasSubstr;

// How the fake communicator behaves.
enum class Mode { WORKS, INIT_HANGS, INIT_FAILS, OP_HANGS };

struct Counters {
  std::atomic<int> aborts{0};
  std::atomic<int> launches{0};
};

class FakeLaunched : public nccl::Launched {
 public:
  explicit FakeLaunched(bool done) : done_(done) {}
  bool ready() override { return done_; }

 private:
  bool done_;
};

// A communicator of "two ranks holding the same data": SUM doubles, other ops keep the values.
class FakeComm : public nccl::Communicator {
 public:
  FakeComm(Mode mode, Counters& n) : mode_(mode), n_(n) {}
  nccl::State poll(std::string* error) override {
    if (mode_ == Mode::INIT_HANGS && !aborted_) return nccl::State::PENDING;
    if (mode_ == Mode::INIT_FAILS) {
      *error = "unhandled system error";
      return nccl::State::FAILED;
    }
    return nccl::State::READY;
  }
  std::unique_ptr<nccl::Launched> launch(const std::vector<nccl::Call>& calls) override {
    ++n_.launches;
    for (const auto& c : calls) {
      if (c.send && c.recv && c.send != c.recv) std::memmove(c.recv, c.send, c.count * dtype_size(c.dtype));
      if (c.prim == nccl::Prim::ALL_REDUCE && c.op == ReduceOp::SUM && c.dtype == DType::FLOAT32) {
        for (size_t i = 0; i < c.count; ++i) static_cast<float*>(c.recv)[i] *= 2;
      }
    }
    return std::make_unique<FakeLaunched>(mode_ != Mode::OP_HANGS);
  }
  void abort() override {
    aborted_ = true;
    ++n_.aborts;
  }

 private:
  Mode mode_;
  Counters& n_;
  bool aborted_ = false;
};

class FakeDriver : public nccl::Driver {
 public:
  Mode mode = Mode::WORKS;
  int gpus = FakeDevice::kDevices;
  bool same_uuid = false;     // every device reports one GPU (ranks sharing it)
  bool unique_uuids = false;  // every call reports another GPU (ranks of one process on GPUs of their own)
  bool load_fails = false;
  Counters n;

  DeviceType device_type() const override { return DeviceType::FAKE; }
  int device_count() override { return gpus; }
  std::string device_uuid(int device) override {
    if (unique_uuids) return str_cat("GPU-fake-call", calls++);
    return same_uuid ? "GPU-fake" : str_cat("GPU-fake", device);
  }
  std::atomic<int> calls{0};
  std::string unique_id() override {
    if (load_fails) throw BackendUnavailableError("cannot load libnccl.so.2: not found");
    return std::string("id\0with\0zeros", 13);
  }
  std::unique_ptr<nccl::Communicator> connect(int, int, int, const std::string& id) override {
    EXPECT_EQ(id, std::string("id\0with\0zeros", 13));
    return std::make_unique<FakeComm>(mode, n);
  }
};

class NcclGroup : public ::testing::Test {
 protected:
  void SetUp() override {
    register_nccl_backend();
    previous_ = nccl::set_driver(driver_);
  }
  void TearDown() override { nccl::set_driver(previous_); }

  std::shared_ptr<ProcessGroup> create(int rank = 0, int size = 1, milliseconds timeout = milliseconds(10000),
                                       std::shared_ptr<Store> store = std::make_shared<HashStore>()) {
    return create_process_group("nccl", store, rank, size, ProcessGroupOptions{timeout, "default"});
  }

  FakeDevice fake_;
  std::shared_ptr<FakeDriver> driver_ = std::make_shared<FakeDriver>();
  std::shared_ptr<nccl::Driver> previous_;
};

TEST_F(NcclGroup, IsDeviceNativeSoTheStagedWrapperIsNotApplied) {
  auto pg = create();
  EXPECT_NE(dynamic_cast<NcclProcessGroup*>(pg.get()), nullptr);
  EXPECT_EQ(dynamic_cast<StagedProcessGroup*>(pg.get()), nullptr);
  EXPECT_EQ(pg->backend_name(), "nccl");
}

TEST_F(NcclGroup, DeviceTensorsGoStraightToTheCommunicator) {
  auto pg = create();
  Tensor t = Tensor::from_vector(std::vector<float>{1, 2, 3}).to(FakeDevice::place(0));
  pg->all_reduce(t)->wait();
  EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{2, 4, 6}));
  EXPECT_EQ(driver_->n.launches.load(), 1);
}

TEST_F(NcclGroup, HostTensorsAreStagedThroughTheDeviceAndCopiedBack) {
  auto pg = create();
  Tensor t = Tensor::from_vector(std::vector<float>{1, 2});
  auto work = pg->all_reduce(t);
  EXPECT_TRUE(work->is_completed());  // staged ops complete before they return
  EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{2, 4}));
  pg->barrier()->wait();
  EXPECT_EQ(driver_->n.launches.load(), 2);
}

TEST_F(NcclGroup, WatchdogAbortsAStuckCollectiveWithTimeoutErrorNamingOpSeqAndRank) {
  driver_->mode = Mode::OP_HANGS;
  auto pg = create(0, 1, milliseconds(200));
  Tensor t = Tensor::ones({4}, DType::FLOAT32, FakeDevice::place(0));
  const auto start = std::chrono::steady_clock::now();
  auto work = pg->all_reduce(t);
  try {
    work->wait();
    FAIL() << "expected TimeoutError";
  } catch (const TimeoutError& e) {
    EXPECT_THAT(e.what(), HasSubstr("all_reduce (rank 0, seq 0, group default)"));
    EXPECT_THAT(e.what(), HasSubstr("nccl collective did not complete within 200 ms on fake:0"));
    EXPECT_THAT(e.what(), HasSubstr("aborted the communicator"));
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  EXPECT_EQ(driver_->n.aborts.load(), 1);
  EXPECT_TRUE(work->is_completed());
  try {
    pg->all_reduce(t);
    FAIL() << "expected CommError";
  } catch (const CommError& e) {
    EXPECT_THAT(e.what(),
                HasSubstr("all_reduce (rank 0, seq 1, group default): the nccl communicator was aborted"));
    EXPECT_THAT(e.what(), HasSubstr("seq 0"));
  }
}

TEST_F(NcclGroup, InitThatNeverCompletesIsAbortedAfterTheTimeout) {
  driver_->mode = Mode::INIT_HANGS;
  try {
    create(0, 1, milliseconds(200));
    FAIL() << "expected TimeoutError";
  } catch (const TimeoutError& e) {
    EXPECT_THAT(e.what(),
                HasSubstr("nccl init (rank 0, group default, fake:0): the communicator was not ready "
                          "within 200 ms"));
  }
  EXPECT_EQ(driver_->n.aborts.load(), 1);
}

TEST_F(NcclGroup, InitFailureIsACommErrorWithNcclsReason) {
  driver_->mode = Mode::INIT_FAILS;
  try {
    create();
    FAIL() << "expected CommError";
  } catch (const CommError& e) {
    EXPECT_THAT(e.what(), HasSubstr("nccl init (rank 0, group default, fake:0): unhandled system error"));
  }
}

TEST_F(NcclGroup, RequestedWithoutGpusSaysSo) {
  driver_->gpus = 0;
  try {
    create();
    FAIL() << "expected DeviceError";
  } catch (const DeviceError& e) {
    EXPECT_THAT(e.what(),
                HasSubstr("backend nccl (rank 0, group default): rank 0 has no GPU (0 GPU(s) present here)"));
  }
}

TEST_F(NcclGroup, RequestedWithoutACudaBuildSaysSo) {
  nccl::set_driver(nullptr);
  try {
    create();
    FAIL() << "expected BackendUnavailableError";
  } catch (const BackendUnavailableError& e) {
    EXPECT_THAT(e.what(), HasSubstr("crew is not compiled with CUDA"));
  }
}

TEST_F(NcclGroup, RanksSharingAGpuAreRefusedOnEveryRank) {
  driver_->same_uuid = true;
  auto store = std::make_shared<HashStore>();
  auto rank = [&](int r) {
    try {
      create(r, 2, milliseconds(5000), store);
      return std::string("no error");
    } catch (const DeviceError& e) {
      return std::string(e.what());
    }
  };
  auto other = std::async(std::launch::async, rank, 1);
  EXPECT_THAT(rank(0), HasSubstr("ranks 0 and 1 share GPU GPU-fake, which NCCL refuses"));
  EXPECT_THAT(other.get(), HasSubstr("ranks 0 and 1 share GPU GPU-fake"));
}

TEST_F(NcclGroup, NcclThatCannotLoadOnRankZeroFailsTheOtherRanksInsteadOfHangingThem) {
  driver_->load_fails = true;
  driver_->unique_uuids = true;
  auto store = std::make_shared<HashStore>();
  auto other = std::async(std::launch::async, [&] {
    try {
      create(1, 2, milliseconds(20000), store);
    } catch (const BackendUnavailableError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  });
  EXPECT_THROW(create(0, 2, milliseconds(20000), store), BackendUnavailableError);
  ASSERT_EQ(other.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_THAT(other.get(), HasSubstr("rank 0 could not start NCCL: cannot load libnccl.so.2"));
}

TEST(NcclChoice, EveryRankOnAGpuOfItsOwn) {
  EXPECT_EQ(nccl_unusable_reason({"GPU-a", "GPU-b"}), "");
  EXPECT_EQ(nccl_unusable_reason({"GPU-a", ""}), "rank 1 has no GPU");
  EXPECT_THAT(nccl_unusable_reason({"GPU-a", "GPU-b", "GPU-a"}), HasSubstr("ranks 0 and 2 share GPU GPU-a"));
}

TEST_F(NcclGroup, AutoChoosesNcclOnlyWhenTheCurrentPlaceIsADevice) {
  HashStore cpu_store;
  EXPECT_FALSE(nccl_fits_job(cpu_store, 0, 1, milliseconds(1000)));  // current place: cpu
  set_device("fake:1");
  HashStore store;
  const bool fits = nccl_fits_job(store, 0, 1, milliseconds(1000));
  set_device("cpu");
  EXPECT_TRUE(fits);
  nccl::set_driver(nullptr);
  HashStore none;
  EXPECT_FALSE(nccl_fits_job(none, 0, 1, milliseconds(1000)));
}

}  // namespace
}  // namespace crew::dist
