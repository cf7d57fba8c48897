// DataLoader: batching, order for any num_workers, errors from workers, early stop, timeout.
#include "crew/io/dataloader.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "crew/io/distributed_batch_sampler.h"
#include "crew/io/transforms/random_transforms.h"
#include "tests/testing/fake_device.h"

namespace crew::io {
namespace {

// Sample i = {x float32 [2, 3] filled with i, y int64 [] = i}; optionally fails or sleeps.
class CountingDataset : public Dataset {
 public:
  explicit CountingDataset(int64_t n, int64_t fail_at = -1, int sleep_ms = 0, TransformPtr tf = nullptr)
      : n_(n), fail_at_(fail_at), sleep_ms_(sleep_ms), tf_(std::move(tf)) {}
  int64_t size() const override { return n_; }
  Sample get(int64_t i) const override {
    calls++;
    if (i == fail_at_) throw ValueError("decode failed on purpose");
    if (sleep_ms_) std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms_));
    Tensor x = Tensor::full({1, 2, 3}, static_cast<double>(i));
    if (tf_) x = (*tf_)(x);
    return {x, Tensor::scalar(static_cast<double>(i), DType::INT64)};
  }
  mutable std::atomic<int> calls{0};

 private:
  int64_t n_, fail_at_;
  int sleep_ms_;
  TransformPtr tf_;
};

std::vector<std::vector<float>> run_all(DataLoader& loader) {
  std::vector<std::vector<float>> out;
  for (auto& batch : loader) {
    std::vector<float> v = batch[0].to_vector<float>();
    std::vector<float> y = batch[1].to_vector<float>();
    v.insert(v.end(), y.begin(), y.end());
    out.push_back(v);
  }
  return out;
}

TEST(DataLoader, StacksFieldsAndCountsBatches) {
  auto ds = std::make_shared<CountingDataset>(10);
  DataLoader loader(ds, {.batch_size = 4});
  EXPECT_EQ(loader.size(), 3);
  std::vector<Shape> shapes;
  std::vector<int64_t> labels;
  for (auto& batch : loader) {
    ASSERT_EQ(batch.size(), 2u);
    shapes.push_back(batch[0].shape());
    EXPECT_EQ(batch[1].dtype(), DType::INT64);
    for (int64_t l : batch[1].to_vector<int64_t>()) labels.push_back(l);
  }
  EXPECT_EQ(shapes, (std::vector<Shape>{{4, 1, 2, 3}, {4, 1, 2, 3}, {2, 1, 2, 3}}));
  EXPECT_EQ(labels, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  DataLoader dropping(ds, {.batch_size = 4, .drop_last = true});
  EXPECT_EQ(dropping.size(), 2);
  EXPECT_EQ(run_all(dropping).size(), 2u);
}

TEST(DataLoader, SameBatchesInTheSameOrderForAnyNumWorkers) {
  // Random augmentation plus shuffling: the output depends only on the seeds.
  auto tf = std::make_shared<RandomCrop>(2, 3, 1);
  auto ds = std::make_shared<CountingDataset>(37, -1, 0, tf);
  std::vector<std::vector<std::vector<float>>> runs;
  for (int workers : {0, 1, 2, 3}) {
    auto sampler = std::make_shared<DistributedBatchSampler>(*ds, 5, DistributedBatchSamplerOptions{1, 0, true});
    DataLoader loader(ds, sampler, {.num_workers = workers, .prefetch_factor = 2, .seed = 123});
    run_all(loader);  // epoch 0
    runs.push_back(run_all(loader));  // epoch 1
  }
  ASSERT_EQ(runs[0].size(), 8u);
  for (size_t k = 1; k < runs.size(); ++k) EXPECT_EQ(runs[k], runs[0]) << "workers run " << k;
}

TEST(DataLoader, ResumeAtGivesTheRestOfThePassExactly) {
  // Shuffling plus random augmentation: a loader resumed at (epoch e, batch k) yields the
  // batches k, k+1, ... of an uninterrupted run's epoch e, then whole epochs as that run.
  auto tf = std::make_shared<RandomCrop>(2, 3, 1);
  auto ds = std::make_shared<CountingDataset>(37, -1, 0, tf);
  auto make = [&](int workers) {
    auto sampler = std::make_shared<DistributedBatchSampler>(*ds, 5, DistributedBatchSamplerOptions{2, 1, true});
    return std::make_pair(sampler, DataLoader(ds, sampler, {.num_workers = workers, .seed = 7}));
  };
  auto [s_full, full] = make(0);
  std::vector<std::vector<std::vector<float>>> epochs;
  for (int e = 0; e < 3; ++e) epochs.push_back(run_all(full));
  ASSERT_EQ(epochs[1].size(), 4u);
  for (int workers : {0, 2}) {
    for (int64_t k : {0, 1, 3, 4}) {
      auto [sampler, resumed] = make(workers);
      sampler->set_epoch(1);
      resumed.resume_at(1, k);
      std::vector<std::vector<float>> rest = run_all(resumed);
      EXPECT_EQ(rest, std::vector<std::vector<float>>(epochs[1].begin() + k, epochs[1].end()))
          << "k " << k << " workers " << workers;
      EXPECT_EQ(resumed.passes(), 2u);
      EXPECT_EQ(run_all(resumed), epochs[2]) << "k " << k << " workers " << workers;
    }
  }
  auto [sampler, bad] = make(0);
  EXPECT_THROW(bad.resume_at(0, -1), ValueError);
  bad.resume_at(0, 5);
  EXPECT_THROW(bad.begin(), ValueError);
}

TEST(DataLoader, WorkerErrorNamesWorkerAndSample) {
  auto ds = std::make_shared<CountingDataset>(40, /*fail_at=*/23);
  for (int workers : {0, 2}) {
    DataLoader loader(ds, {.batch_size = 4, .num_workers = workers});
    int batches = 0;
    try {
      for (auto& batch : loader) {
        (void)batch;
        ++batches;
      }
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      std::string msg = e.what();
      EXPECT_NE(msg.find("sample 23: decode failed on purpose"), std::string::npos) << msg;
      EXPECT_NE(msg.find(workers ? "DataLoader worker " : "DataLoader main thread"), std::string::npos) << msg;
    }
    EXPECT_EQ(batches, 5) << "batches before the failing one arrive first";
  }
}

TEST(DataLoader, BreakingOutStopsAndJoinsWorkers) {
  auto ds = std::make_shared<CountingDataset>(100000, -1, 1);
  DataLoader loader(ds, {.batch_size = 2, .num_workers = 2, .prefetch_factor = 2});
  int seen = 0;
  for (auto& batch : loader) {
    (void)batch;
    if (++seen == 3) break;
  }
  // The destructor joined the workers: no more samples are decoded after the loop.
  const int calls = ds->calls.load();
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  EXPECT_EQ(ds->calls.load(), calls);
  // Bounded prefetch: at most 3 consumed + prefetch_factor * num_workers (+1 each in hand) batches.
  EXPECT_LE(calls, 2 * (3 + 4 + 2));
}

TEST(DataLoader, TimeoutWhenABatchTakesTooLong) {
  auto ds = std::make_shared<CountingDataset>(4, -1, /*sleep_ms=*/60);
  {
    DataLoader loader(ds, {.batch_size = 4, .num_workers = 1, .timeout = std::chrono::milliseconds(20)});
    EXPECT_THROW(loader.begin(), TimeoutError);
  }
  // The abandoned worker finishes its batch and lets go of the data set.
  for (int i = 0; i < 500 && ds.use_count() > 1; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(ds.use_count(), 1);
}

// Dataset::get blocks until open() (or a 10 s safety limit, so a broken timeout fails the
// test rather than stalling it); counts the calls that returned.
class GateDataset : public Dataset {
 public:
  int64_t size() const override { return 8; }
  Sample get(int64_t i) const override {
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait_for(lock, std::chrono::seconds(10), [&] { return open_; });
    }
    ++returned;
    return {Tensor::scalar(static_cast<double>(i))};
  }
  void open() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      open_ = true;
    }
    cv_.notify_all();
  }
  mutable std::atomic<int> returned{0};

 private:
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  bool open_ = false;
};

// A hung Dataset::get used to delay the TimeoutError until it returned (forever for a real
// hang): the wait timed out, then the iterator joined the hung worker. Now the worker is
// abandoned and the error comes on time, naming the batch and the sample; with
// num_workers = 0 a helper thread loads so that the timeout holds there too.
TEST(DataLoader, TimeoutRaisesOnTimeWhileDatasetGetHangs) {
  for (int workers : {0, 2}) {
    auto ds = std::make_shared<GateDataset>();
    const auto start = std::chrono::steady_clock::now();
    {
      DataLoader loader(ds,
                        {.batch_size = 2, .num_workers = workers, .timeout = std::chrono::milliseconds(300)});
      try {
        auto it = loader.begin();
        ADD_FAILURE() << "no TimeoutError";
      } catch (const TimeoutError& e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find("batch 0 of the pass not ready within the 300 ms timeout"), std::string::npos)
            << msg;
        EXPECT_NE(msg.find("has been in Dataset::get(0)"), std::string::npos) << msg;
      }
    }  // the loader is gone too
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_LT(waited, 5.0) << "num_workers=" << workers << ": the timeout waited for the hung get()";
    // The abandoned workers finish once get() returns, with the data set still alive.
    ds->open();
    for (int i = 0; i < 500 && ds.use_count() > 1; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_EQ(ds.use_count(), 1) << "an abandoned worker still holds the data set";
  }
}

TEST(DataLoader, CustomCollateAndBadOptions) {
  auto ds = std::make_shared<CountingDataset>(6);
  DataLoaderOptions opts;
  opts.batch_size = 3;
  opts.collate_fn = [](const std::vector<Sample>& samples) {
    return Batch{Tensor::scalar(static_cast<double>(samples.size()))};
  };
  DataLoader loader(ds, opts);
  for (auto& batch : loader) EXPECT_EQ(batch[0].item(), 3.0);
  EXPECT_THROW(DataLoader(ds, {.batch_size = 0}), ValueError);
  auto sampler = std::make_shared<BatchSampler>(*ds, 2);
  EXPECT_THROW(DataLoader(ds, sampler, {.batch_size = 4}), ValueError);
  EXPECT_THROW(DataLoader(ds, sampler, {.shuffle = true}), ValueError);
  EXPECT_EQ(DataLoader(ds, sampler).size(), 3);
  DataLoader bad(ds, {.num_workers = -1});
  EXPECT_THROW(bad.begin(), ValueError);
}

}  // namespace
}  // namespace crew::io

namespace crew::io {
namespace {

TEST(DataLoaderPlace, WorkersCopyBatchesToTheDevicePlace) {
  testing::FakeDevice fake;
  auto data = std::make_shared<CountingDataset>(6);
  for (int workers : {0, 2}) {
    DataLoader loader(data, {.batch_size = 2, .num_workers = workers, .device = fake.place(1)});
    int64_t i = 0;
    for (auto& batch : loader) {
      ASSERT_EQ(batch[0].place(), fake.place(1));
      ASSERT_EQ(batch[1].place(), fake.place(1));
      EXPECT_EQ(batch[1].to_vector<int64_t>(), (std::vector<int64_t>{i, i + 1}));
      i += 2;
    }
    EXPECT_EQ(i, 6);
  }
}

TEST(DataLoaderPlace, PinMemoryWithoutAGpuKeepsHostMemory) {
  DataLoader loader(std::make_shared<CountingDataset>(4), {.batch_size = 2, .pin_memory = true});
  for (auto& batch : loader) EXPECT_EQ(batch[0].place(), CPUPlace());
}

}  // namespace
}  // namespace crew::io
