// DataParallel with mixed precision, on real processes: an O2 model's bfloat16 gradients
// (buckets per dtype, averaged in float32 by the backend) train as one process over the whole
// batch does, within bfloat16's rounding; DataParallelOptions::comm_dtype (bf16 gradient
// communication of a float32 model) gives the float32 all_reduce's gradients within it too.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "crew/autograd/autocast.h"
#include "crew/distributed/collective/collective.h"
#include "crew/distributed/data_parallel/data_parallel.h"
#include "crew/distributed/parallel/parallel.h"
#include "crew/distributed/store/tcp_store_server.h"
#include "crew/nn/functional.h"
#include "crew/nn/models/my_net.h"
#include "crew/optim/sgd.h"
#include "crew/tensor/random.h"
#include "crew/tensor/safetensors.h"
#include "tests/distributed/data_parallel_util.h"
#include "tests/testing/child_expect.h"
#include "tests/testing/multiprocess.h"
#include "tests/testing/temp_dir.h"

namespace crew {
namespace {

using namespace std::chrono_literals;
namespace F = nn::functional;
using testing::dist_options;
using testing::read_losses;
using testing::relative_difference;

TEST(ReducerAmp, BucketsHoldOneDtypeEach) {
  // bf16 weights and float32 biases of an O2 model: each dtype fills its own buckets (its
  // first closes at 1 MB), ordered by first parameter, then reversed.
  const std::vector<DType> dtypes = {DType::BFLOAT16, DType::FLOAT32, DType::BFLOAT16, DType::FLOAT32,
                                     DType::BFLOAT16};
  auto groups =
      dist::Reducer::assign_buckets({600000, 1000, 600000, 1000, 600000}, 1u << 20, 25u << 20, dtypes);
  ASSERT_EQ(groups.size(), 3u);
  EXPECT_EQ(groups[0], (std::vector<size_t>{4}));
  EXPECT_EQ(groups[1], (std::vector<size_t>{1, 3}));
  EXPECT_EQ(groups[2], (std::vector<size_t>{0, 2}));
}

struct Batches {
  Tensor images, labels;
};

Batches seed_batches(int steps) {
  Generator data_gen(123);
  Batches b;
  b.images = uniform({steps * 32, 1, 28, 28}, 0.0, 1.0, DType::FLOAT32, &data_gen);
  std::vector<int64_t> labels;
  for (int i = 0; i < steps * 32; ++i) labels.push_back(static_cast<int64_t>(data_gen.next_u64() % 10));
  b.labels = Tensor::from_vector(labels);
  return b;
}

// The seed's CNN at O2 in bfloat16 (weights bfloat16, biases float32: two dtypes of buckets),
// SGD with float32 master weights, `steps` steps of world x (32 / world) samples. Writes the
// losses (mean over ranks is the global batch's) and rank 0's final parameters into dir.
void train_o2(int rank, int world, int steps, const std::string& dir) {
  const Batches data = seed_batches(steps);
  if (world > 1) dist::init_parallel_env();
  seed(1);
  auto net = std::make_shared<nn::models::MyNet>(10, 1, 28);
  for (Tensor p : net->parameters()) {
    if (p.dim() >= 2) p.convert_(DType::BFLOAT16);
  }
  std::shared_ptr<nn::Layer> model = net;
  std::shared_ptr<DataParallel> dp;
  if (world > 1) model = dp = std::make_shared<DataParallel>(net);
  // SGD: its update is proportional to the gradient, so the ranks' rounding shows as it is
  // (Adam's normalised update turns near-zero gradients' rounding into whole steps).
  optim::SGD opt(net->parameters(), {.learning_rate = 0.1});
  opt.set_multi_precision(true);
  const int per_rank = 32 / world;
  std::ofstream losses(dir + "/loss_" + std::to_string(world) + "_" + std::to_string(rank) + ".txt");
  losses.precision(10);
  for (int step = 0; step < steps; ++step) {
    const int64_t begin = step * 32 + rank * per_rank;
    Tensor loss;
    {
      amp::AutocastGuard autocast({.dtype = DType::BFLOAT16, .level = amp::AmpLevel::O2});
      loss = F::cross_entropy((*model)(data.images.slice(begin, begin + per_rank).clone()),
                              data.labels.slice(begin, begin + per_rank).clone());
    }
    losses << loss.item() << "\n";
    loss.backward();
    opt.step();
    opt.clear_grad();
  }
  if (rank == 0) crew::save(net->state_dict(), dir + "/params_" + std::to_string(world) + ".safetensors");
  if (!dp) return;
  bool has_bf16 = false, has_f32 = false;
  for (const auto& bucket : dp->reducer()->buckets()) {
    has_bf16 = has_bf16 || bucket.flat.dtype() == DType::BFLOAT16;
    has_f32 = has_f32 || bucket.flat.dtype() == DType::FLOAT32;
  }
  CHILD_EXPECT(has_bf16 && has_f32, "O2 buckets: bfloat16 ", has_bf16, ", float32 ", has_f32);
}

// One O2 backward on 2 ranks: DataParallel's bfloat16 gradients equal the float32 mean of the
// ranks' own bfloat16 gradients (from an undistributed copy of the model) within one
// bfloat16 rounding.
void check_o2_average(int rank, int world) {
  dist::init_parallel_env();
  const Batches data = seed_batches(1);
  auto make = [] {
    seed(1);
    auto net = std::make_shared<nn::models::MyNet>(10, 1, 28);
    net->to(DType::BFLOAT16);
    return net;
  };
  auto local = make(), net = make();
  DataParallel dp(net);
  Tensor x = data.images.slice(rank * 16, rank * 16 + 16).clone();
  Tensor y = data.labels.slice(rank * 16, rank * 16 + 16).clone();
  {
    amp::AutocastGuard autocast({.dtype = DType::BFLOAT16, .level = amp::AmpLevel::O2});
    F::cross_entropy((*local)(x), y).backward();
    F::cross_entropy(dp(x), y).backward();
  }
  const auto mine = local->parameters(), averaged = net->parameters();
  for (size_t i = 0; i < mine.size(); ++i) {
    Tensor reference = mine[i].grad().to(DType::FLOAT32);
    dist::all_reduce(reference, dist::ReduceOp::AVG);
    CHILD_EXPECT(averaged[i].grad().dtype() == DType::BFLOAT16);
    const double diff = relative_difference(averaged[i].grad(), reference);
    CHILD_EXPECT(diff <= 0x1p-8, "parameter ", i, ": averaged bfloat16 gradient off by ", diff,
                 " (relative)");
  }
  CHILD_EXPECT(world == 2);
}

TEST(DataParallelAmp, O2BFloat16GradientsAreTheFloat32MeanRounded) {
  dist::TCPStoreServer server({.insecure = true});
  testing::expect_all_ok(testing::run_ranks(2, check_o2_average, dist_options(server)));
}

TEST(DataParallelAmp, O2TwoRanksOfSixteenTrackOneRankOfThirtyTwo) {
  constexpr int kSteps = 6;
  testing::TempDir dir;
  dist::TCPStoreServer server({.insecure = true});
  testing::expect_all_ok(testing::run_ranks(
      1, [&](int r, int) { train_o2(r, 1, kSteps, dir.path()); }, dist_options(server)));
  dist::TCPStoreServer server2({.insecure = true});
  testing::expect_all_ok(testing::run_ranks(
      2, [&](int r, int w) { train_o2(r, w, kSteps, dir.path()); }, dist_options(server2)));
  const auto single = read_losses(dir.file("loss_1_0.txt"));
  const auto r0 = read_losses(dir.file("loss_2_0.txt")), r1 = read_losses(dir.file("loss_2_1.txt"));
  ASSERT_EQ(single.size(), static_cast<size_t>(kSteps));
  ASSERT_EQ(r0.size(), single.size());
  ASSERT_EQ(r1.size(), single.size());
  for (int s = 0; s < kSteps; ++s) {
    // bfloat16 rounding (2^-8) of activations and gradients, a few steps deep.
    EXPECT_NEAR((r0[s] + r1[s]) / 2, single[s], 2e-2 * std::abs(single[s])) << "step " << s;
  }
  StateDict a = crew::load(dir.file("params_1.safetensors"));
  StateDict b = crew::load(dir.file("params_2.safetensors"));
  for (const auto& key : a.keys()) {
    EXPECT_EQ(b.at(key).dtype(), a.at(key).dtype()) << key;
    // A bias's gradient sums bfloat16-rounded terms that mostly cancel, so the two runs'
    // biases differ by up to ~15% relative (as much at O1, with float32 parameters and
    // communication): bfloat16's noise, which a bad average would exceed many times over.
    EXPECT_LE(relative_difference(b.at(key), a.at(key)), b.at(key).dim() >= 2 ? 1e-2 : 0.3) << key;
  }
}

// One backward of the same float32 model on 2 ranks (different samples per rank) through two
// DataParallel wrappers, one with comm_dtype bfloat16: the averaged gradients agree within
// bfloat16's rounding, the comm buffers are bfloat16 (half the bytes), and they do differ
// (the compression ran).
void compare_comm_dtypes(int rank, int world) {
  dist::init_parallel_env();
  const Batches data = seed_batches(1);
  auto make = [] {
    seed(1);
    return std::make_shared<nn::models::MyNet>(10, 1, 28);
  };
  auto plain_net = make(), bf16_net = make();
  DataParallel plain(plain_net);
  DataParallel compressed(bf16_net, {.comm_dtype = DType::BFLOAT16});
  const int64_t begin = rank * 16;
  Tensor x = data.images.slice(begin, begin + 16).clone();
  Tensor y = data.labels.slice(begin, begin + 16).clone();
  F::cross_entropy(plain(x), y).backward();
  F::cross_entropy(compressed(x), y).backward();
  double worst = 0;
  bool differs = false;
  const auto p = plain_net->parameters(), q = bf16_net->parameters();
  for (size_t i = 0; i < p.size(); ++i) {
    CHILD_EXPECT(q[i].grad().dtype() == DType::FLOAT32, "gradient ", i, " is ",
                 dtype_name(q[i].grad().dtype()));
    worst = std::max(worst, relative_difference(q[i].grad(), p[i].grad()));
    differs = differs || relative_difference(q[i].grad(), p[i].grad()) > 0;
  }
  CHILD_EXPECT(worst <= 0x1p-7, "bf16 communication: gradients differ by ", worst, " (relative)");
  CHILD_EXPECT(differs, "bf16 communication left every gradient bit for bit as float32's");
  for (const auto& bucket : compressed.reducer()->buckets()) {
    CHILD_EXPECT(bucket.comm.dtype() == DType::BFLOAT16 && bucket.comm.nbytes() * 2 == bucket.flat.nbytes(),
                 "comm buffer ", dtype_name(bucket.comm.dtype()), " of ", bucket.comm.nbytes(), " bytes");
  }
  CHILD_EXPECT(world == 2);
}

TEST(DataParallelAmp, BFloat16CommunicationMatchesFloat32WithinItsRounding) {
  dist::TCPStoreServer server({.insecure = true});
  testing::expect_all_ok(testing::run_ranks(2, compare_comm_dtypes, dist_options(server)));
}

TEST(DataParallelAmp, CommDtypeMustBeSixteenBit) {
  dist::TCPStoreServer server({.insecure = true});
  testing::expect_all_ok(testing::run_ranks(
      2,
      [](int, int) {
        dist::init_parallel_env();
        auto net = std::make_shared<nn::models::MyNet>(10, 1, 28);
        try {
          DataParallel dp(net, {.comm_dtype = DType::FLOAT64});
        } catch (const ValueError& e) {
          CHILD_EXPECT(std::string(e.what()).find("comm_dtype must be bfloat16 or float16, got float64") !=
                           std::string::npos,
                       e.what());
          return;
        }
        CHILD_EXPECT(false, "comm_dtype float64 accepted");
      },
      dist_options(server)));
}

}  // namespace
}  // namespace crew
