// batch_norm with a BatchNormStatsSync: two "ranks" in two threads of this process, each with
// half of a batch, against one call over the whole batch; a sync that sums one rank changes
// nothing; inference never calls the sync.
#include "crew/nn/batch_norm_sync.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "crew/autograd/ops.h"
#include "crew/core/check.h"
#include "crew/core/error.h"
#include "crew/nn/batch_norm.h"
#include "crew/nn/functional.h"
#include "crew/tensor/random.h"

namespace crew::nn {
namespace {

namespace F = functional;
using namespace std::chrono_literals;

// A world of two threads: all_reduce_sum waits for both (10 s at most, so a failing thread
// fails the test instead of hanging it), then gives each rank 0's values + rank 1's.
class TwoThreadWorld {
 public:
  struct Rank final : BatchNormStatsSync {
    Rank(TwoThreadWorld* w, int r) : world(w), rank(r) {}
    void all_reduce_sum(std::vector<double>& values) override {
      world->reduce(rank, values.data(), static_cast<int64_t>(values.size()));
    }
    TwoThreadWorld* world;
    int rank;
  };

  std::shared_ptr<Rank> rank(int r) { return std::make_shared<Rank>(this, r); }
  std::vector<int64_t> sizes(int r) const { return sizes_[r]; }

 private:
  void reduce(int rank, double* data, int64_t n) {
    slots_[rank] = data;
    sizes_[rank].push_back(n);
    meet();  // both slots written
    CREW_CHECK_EQ(sizes_[0].back(), sizes_[1].back());
    std::vector<double> sum(n);
    for (int64_t i = 0; i < n; ++i) sum[i] = slots_[0][i] + slots_[1][i];
    meet();  // both read before either writes
    std::copy(sum.begin(), sum.end(), data);
  }
  void meet() {
    std::unique_lock lock(mu_);
    const int64_t generation = generation_;
    if (++arrived_ == 2) {
      arrived_ = 0;
      ++generation_;
      cv_.notify_all();
      return;
    }
    CREW_CHECK_T(TimeoutError, cv_.wait_for(lock, 10s, [&] { return generation_ != generation; }),
                 "TwoThreadWorld: the other rank did not arrive");
  }

  std::mutex mu_;
  std::condition_variable cv_;
  int arrived_ = 0;
  int64_t generation_ = 0;
  double* slots_[2] = {nullptr, nullptr};
  std::vector<int64_t> sizes_[2];
};

// Runs fn(0) and fn(1) in two threads; rethrows the first failure.
void run_two(const std::function<void(int)>& fn) {
  std::exception_ptr errors[2];
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      try {
        fn(r);
      } catch (...) {
        errors[r] = std::current_exception();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

Tensor leaf(const Tensor& t) {
  Tensor c = t.detach().clone();
  c.set_stop_gradient(false);
  return c;
}

void expect_near(const Tensor& a, const Tensor& b, double tol, const char* what) {
  const auto va = a.to_vector<double>(), vb = b.to_vector<double>();
  ASSERT_EQ(va.size(), vb.size()) << what;
  for (size_t i = 0; i < va.size(); ++i) ASSERT_NEAR(va[i], vb[i], tol) << what << " [" << i << "]";
}

struct Result {
  Tensor y, gx, gw, gb, rm, rv;
};

// batch_norm (training, float64) of x with loss sum(y * r): outputs, gradients, running stats.
Result run_batch_norm(const Tensor& x_in, const Tensor& r, const Tensor& w_in, const Tensor& b_in,
                      std::shared_ptr<BatchNormStatsSync> sync) {
  Result out;
  Tensor x = leaf(x_in), w = leaf(w_in), b = leaf(b_in);
  out.rm = Tensor::from_vector<double>({0.5, -0.5, 0.0}, {3});
  out.rv = Tensor::from_vector<double>({1.0, 2.0, 0.5}, {3});
  out.y = F::batch_norm(x, out.rm, out.rv, w, b, true, 0.9, 1e-5, std::move(sync));
  sum(mul(out.y, r)).backward();
  out.gx = x.grad();
  out.gw = w.grad();
  out.gb = b.grad();
  return out;
}

TEST(BatchNormSync, TwoHalvesThroughTheSyncEqualTheWholeBatch) {
  Generator gen(11);
  Tensor x = uniform({6, 3, 2, 5}, -2.0, 3.0, DType::FLOAT64, &gen);
  Tensor r = uniform({6, 3, 2, 5}, -1.0, 1.0, DType::FLOAT64, &gen);
  Tensor w = uniform({3}, 0.5, 1.5, DType::FLOAT64, &gen);
  Tensor b = uniform({3}, -0.5, 0.5, DType::FLOAT64, &gen);
  const Result whole = run_batch_norm(x, r, w, b, nullptr);

  TwoThreadWorld world;
  Result half[2];
  run_two([&](int rank) {
    const int64_t begin = rank * 3;
    half[rank] = run_batch_norm(x.slice(begin, begin + 3).clone(), r.slice(begin, begin + 3).clone(), w, b,
                                world.rank(rank));
  });
  EXPECT_EQ(world.sizes(0), (std::vector<int64_t>{4, 3, 6}));  // [sum, count], sq. deviations, grads
  for (int rank = 0; rank < 2; ++rank) {
    const int64_t begin = rank * 3;
    expect_near(half[rank].y, whole.y.slice(begin, begin + 3), 1e-12, "y");
    expect_near(half[rank].gx, whole.gx.slice(begin, begin + 3), 1e-12, "x grad");
    expect_near(half[rank].rm, whole.rm, 1e-12, "running mean");
    expect_near(half[rank].rv, whole.rv, 1e-12, "running variance");
  }
  // Weight and bias gradients are each rank's share of the whole batch's.
  expect_near(add(half[0].gw, half[1].gw), whole.gw, 1e-12, "weight grad");
  expect_near(add(half[0].gb, half[1].gb), whole.gb, 1e-12, "bias grad");
}

// A sync over one rank: the sums come back unchanged.
struct WorldOfOne final : BatchNormStatsSync {
  void all_reduce_sum(std::vector<double>& values) override {
    sizes.push_back(static_cast<int64_t>(values.size()));
  }
  std::vector<int64_t> sizes;
};

TEST(BatchNormSync, AWorldOfOneIsPlainBatchNormBitForBit) {
  Generator gen(5);
  Tensor x = uniform({4, 3, 3, 3}, -1.0, 2.0, DType::FLOAT64, &gen);
  Tensor r = uniform({4, 3, 3, 3}, -1.0, 1.0, DType::FLOAT64, &gen);
  Tensor w = uniform({3}, 0.5, 1.5, DType::FLOAT64, &gen);
  Tensor b = uniform({3}, -0.5, 0.5, DType::FLOAT64, &gen);
  auto one = std::make_shared<WorldOfOne>();
  const Result plain = run_batch_norm(x, r, w, b, nullptr);
  const Result synced = run_batch_norm(x, r, w, b, one);
  EXPECT_EQ(one->sizes, (std::vector<int64_t>{4, 3, 6}));
  EXPECT_EQ(synced.y.to_vector<double>(), plain.y.to_vector<double>());
  EXPECT_EQ(synced.gx.to_vector<double>(), plain.gx.to_vector<double>());
  EXPECT_EQ(synced.gw.to_vector<double>(), plain.gw.to_vector<double>());
  EXPECT_EQ(synced.rv.to_vector<double>(), plain.rv.to_vector<double>());
}

TEST(BatchNormSync, InferenceAndInputsWithoutGradientDoNotCommunicate) {
  auto one = std::make_shared<WorldOfOne>();
  BatchNorm2D bn(2);
  bn.set_stats_sync(one);
  EXPECT_EQ(bn.stats_sync(), one);
  Tensor x = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6, 7, 8}, {2, 2, 1, 2});
  sum(bn(x)).backward();  // x needs no gradient: forward's two calls only
  EXPECT_EQ(one->sizes, (std::vector<int64_t>{3, 2}));
  bn.eval();
  bn(x);
  EXPECT_EQ(one->sizes.size(), 2u);
}

TEST(BatchNormSync, TwoBatchNorm2DHalvesEqualOneOverTheWholeBatch) {
  Generator gen(3);
  Tensor x = uniform({4, 2, 3, 3}, -1.0, 1.0, DType::FLOAT32, &gen);
  Tensor r = uniform({4, 2, 3, 3}, -1.0, 1.0, DType::FLOAT32, &gen);
  BatchNorm2D whole(2);
  Tensor xw = leaf(x);
  sum(mul(whole(xw), r)).backward();

  TwoThreadWorld world;
  Tensor gx[2], rm[2];
  run_two([&](int rank) {
    BatchNorm2D bn(2);
    bn.set_stats_sync(world.rank(rank));
    Tensor xh = leaf(x.slice(rank * 2, rank * 2 + 2));
    sum(mul(bn(xh), r.slice(rank * 2, rank * 2 + 2).clone())).backward();
    gx[rank] = xh.grad();
    rm[rank] = bn.running_variance();
  });
  for (int rank = 0; rank < 2; ++rank) {
    expect_near(gx[rank], xw.grad().slice(rank * 2, rank * 2 + 2), 1e-5, "x grad");
    expect_near(rm[rank], whole.running_variance(), 1e-6, "running variance");
  }
}

}  // namespace
}  // namespace crew::nn
