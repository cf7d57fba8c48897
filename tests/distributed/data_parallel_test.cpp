#include "crew/distributed/data_parallel/data_parallel.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>

#include "crew/autograd/autograd.h"
#include "crew/autograd/ops.h"
#include "crew/distributed/debug/debug_process_group.h"
#include "crew/distributed/parallel/parallel.h"
#include "crew/distributed/process_group/staged_process_group.h"
#include "crew/distributed/store/tcp_store_server.h"
#include "crew/nn/functional.h"
#include "crew/nn/linear.h"
#include "crew/nn/models/my_net.h"
#include "crew/optim/adam.h"
#include "crew/tensor/random.h"
#include "crew/tensor/safetensors.h"
#include "tests/distributed/data_parallel_util.h"
#include "tests/testing/fake_device.h"
#include "tests/testing/fake_kernels.h"
#include "tests/testing/multiprocess.h"
#include "tests/testing/temp_dir.h"

namespace crew {
namespace {

using namespace std::chrono_literals;
namespace F = nn::functional;
using testing::dist_options;
using testing::read_losses;
using testing::relative_difference;

TEST(Reducer, AssignsBucketsInReverseRegistrationOrder) {
  // 600 KB + 600 KB closes the 1 MB first bucket; 10 MB + 20 MB closes a 25 MB bucket.
  auto groups =
      dist::Reducer::assign_buckets({600000, 600000, 10000000, 20000000, 1000}, 1u << 20, 25u << 20);
  ASSERT_EQ(groups.size(), 3u);
  EXPECT_EQ(groups[0], (std::vector<size_t>{4}));
  EXPECT_EQ(groups[1], (std::vector<size_t>{2, 3}));
  EXPECT_EQ(groups[2], (std::vector<size_t>{0, 1}));
  EXPECT_EQ(dist::Reducer::assign_buckets({10}, 1u << 20, 25u << 20).size(), 1u);
}

// The seed's CNN trained for `steps` Adam steps: world ranks x (32 / world) samples per step,
// over the same 32-sample global batches. Writes rank 0's final parameters and every rank's
// losses into dir.
void train_seed_cnn(int rank, int world, int steps, const std::string& dir) {
  Generator data_gen(123);
  Tensor images = uniform({steps * 32, 1, 28, 28}, 0.0, 1.0, DType::FLOAT32, &data_gen);
  std::vector<int64_t> label_values;
  for (int i = 0; i < steps * 32; ++i) label_values.push_back(static_cast<int64_t>(data_gen.next_u64() % 10));
  Tensor labels = Tensor::from_vector(label_values);
  if (world > 1) dist::init_parallel_env();
  seed(1);
  auto net = std::make_shared<nn::models::MyNet>(10, 1, 28);
  std::shared_ptr<nn::Layer> model = net;
  std::shared_ptr<DataParallel> dp;
  if (world > 1) model = dp = std::make_shared<DataParallel>(net);
  optim::Adam opt(net->parameters());
  const int per_rank = 32 / world;
  std::ofstream losses(dir + "/loss_" + std::to_string(world) + "_" + std::to_string(rank) + ".txt");
  losses.precision(10);
  for (int step = 0; step < steps; ++step) {
    const int64_t begin = step * 32 + rank * per_rank;
    Tensor x = images.slice(begin, begin + per_rank).clone();
    Tensor y = labels.slice(begin, begin + per_rank).clone();
    Tensor loss = F::cross_entropy((*model)(x), y);
    losses << loss.item() << "\n";
    loss.backward();
    opt.step();
    opt.clear_grad();
  }
  losses.close();
  if (rank == 0) crew::save(net->state_dict(), dir + "/params_" + std::to_string(world) + ".safetensors");
  if (dp)
    CREW_CHECK(dp->reducer()->steps() == static_cast<size_t>(steps), "reducer ran ", dp->reducer()->steps());
}

void expect_same_training(int world) {
  constexpr int kSteps = 20;
  testing::TempDir dir;
  dist::TCPStoreServer server({.insecure = true});
  testing::expect_all_ok(testing::run_ranks(
      1, [&](int r, int) { train_seed_cnn(r, 1, kSteps, dir.path()); }, dist_options(server)));
  dist::TCPStoreServer server2({.insecure = true});
  testing::expect_all_ok(testing::run_ranks(
      world, [&](int r, int w) { train_seed_cnn(r, w, kSteps, dir.path()); }, dist_options(server2)));
  auto single = read_losses(dir.file("loss_1_0.txt"));
  ASSERT_EQ(single.size(), static_cast<size_t>(kSteps));
  std::vector<double> averaged(kSteps, 0.0);
  for (int r = 0; r < world; ++r) {
    auto l = read_losses(dir.file("loss_" + std::to_string(world) + "_" + std::to_string(r) + ".txt"));
    ASSERT_EQ(l.size(), static_cast<size_t>(kSteps)) << "rank " << r;
    for (int s = 0; s < kSteps; ++s) averaged[s] += l[s] / world;
  }
  for (int s = 0; s < kSteps; ++s) {
    EXPECT_NEAR(averaged[s], single[s], 1e-5 * std::abs(single[s])) << "step " << s;
  }
  StateDict a = crew::load(dir.file("params_1.safetensors"));
  StateDict b = crew::load(dir.file("params_" + std::to_string(world) + ".safetensors"));
  for (const auto& key : a.keys()) {
    EXPECT_LE(relative_difference(b.at(key), a.at(key)), 1e-5) << key;
  }
}

TEST(DataParallel, TwoRanksOfSixteenEqualOneRankOfThirtyTwo) { expect_same_training(2); }
TEST(DataParallel, FourRanksOfEightEqualOneRankOfThirtyTwo) { expect_same_training(4); }

// A small net whose layers each get their own bucket.
class TinyNet : public nn::Layer {
 public:
  explicit TinyNet(bool with_unused = false) : Layer("tiny") {
    fc1_ = register_sublayer("fc1", std::make_shared<nn::Linear>(4, 8));
    fc2_ = register_sublayer("fc2", std::make_shared<nn::Linear>(8, 3));
    if (with_unused) unused_ = register_sublayer("unused", std::make_shared<nn::Linear>(3, 3));
  }
  Tensor forward(const Tensor& x) override { return (*fc2_)(F::relu((*fc1_)(x))); }

 private:
  std::shared_ptr<nn::Linear> fc1_, fc2_, unused_;
};

Tensor rank_input(int rank, int step) {
  Generator g(1000 + 10 * rank + step);
  return uniform({5, 4}, -1, 1, DType::FLOAT32, &g);
}

// Gradients of sum(net(x)) for each rank's input, computed locally (no communication).
std::vector<std::vector<float>> local_grads(TinyNet& net, const Tensor& x) {
  net.clear_gradients(false);
  Tensor loss = sum(net(x));
  loss.backward();
  std::vector<std::vector<float>> grads;
  for (auto& p : net.parameters()) grads.push_back(p.grad().to_vector<float>());
  net.clear_gradients(false);
  return grads;
}

void expect_grads_near(const std::vector<Tensor>& params, const std::vector<std::vector<float>>& expected) {
  ASSERT_EQ(params.size(), expected.size());
  for (size_t i = 0; i < params.size(); ++i) {
    auto g = params[i].grad().to_vector<float>();
    for (size_t k = 0; k < g.size(); ++k)
      CREW_CHECK(std::abs(g[k] - expected[i][k]) < 1e-5, "param ", i, " elem ", k, ": ", g[k], " vs ",
                 expected[i][k]);
  }
}

TEST(DataParallel, SmallBucketsAverageGradientsAndNoSyncAccumulates) {
  dist::TCPStoreServer server({.insecure = true});
  auto results = testing::run_ranks(
      2,
      [&](int rank, int world) {
        dist::init_parallel_env();
        seed(7);
        auto net = std::make_shared<TinyNet>();
        seed(7);
        TinyNet reference;  // same initial weights, used for local gradients
        DataParallelOptions o;
        o.last_comm_buffer_bytes = 64;
        o.comm_buffer_bytes = 64;
        DataParallel dp(net, o);
        // Parameters of 128, 32, 96 and 12 bytes with 64-byte limits group as [0], [1, 2], [3];
        // reversed, fc2.bias comes first.
        const auto& buckets = dp.reducer()->buckets();
        CREW_CHECK_EQ(buckets.size(), 3u, "bucket count");
        CREW_CHECK_EQ(buckets[1].params.size(), 2u, "middle bucket");
        CREW_CHECK_EQ(buckets[0].params[0], 3u, "first bucket holds the last parameter");
        // Expected: the average over ranks of each rank's local gradients.
        std::vector<std::vector<float>> expected;
        for (int r = 0; r < world; ++r) {
          auto g = local_grads(reference, rank_input(r, 0));
          if (expected.empty()) expected.assign(g.size(), {});
          for (size_t i = 0; i < g.size(); ++i) {
            expected[i].resize(g[i].size(), 0.0f);
            for (size_t k = 0; k < g[i].size(); ++k) expected[i][k] += g[i][k] / world;
          }
        }
        sum(dp(rank_input(rank, 0))).backward();
        expect_grads_near(net->parameters(), expected);
        net->clear_gradients(false);
        // no_sync: step 1 accumulates locally, step 2 synchronises the sum of both.
        {
          auto guard = dp.no_sync();
          sum(dp(rank_input(rank, 1))).backward();
        }
        auto local = local_grads(reference, rank_input(rank, 1));
        expect_grads_near(net->parameters(), local);  // not averaged yet
        sum(dp(rank_input(rank, 2))).backward();
        std::vector<std::vector<float>> acc;
        for (int r = 0; r < world; ++r) {
          auto g1 = local_grads(reference, rank_input(r, 1));
          auto g2 = local_grads(reference, rank_input(r, 2));
          if (acc.empty()) acc.assign(g1.size(), {});
          for (size_t i = 0; i < g1.size(); ++i) {
            acc[i].resize(g1[i].size(), 0.0f);
            for (size_t k = 0; k < g1[i].size(); ++k) acc[i][k] += (g1[i][k] + g2[i][k]) / world;
          }
        }
        expect_grads_near(net->parameters(), acc);
        // state_dict keys carry no wrapper prefix.
        CREW_CHECK(dp.state_dict().contains("fc1.weight"), "state_dict has fc1.weight");
      },
      dist_options(server));
  testing::expect_all_ok(results);
}

// The rule of docs/data_parallel.md, "Gradients and clear_grad": after a synchronised backward
// every gradient is a view of its bucket slot, handed over as soon as the parameter's hook ran
// (not at the end of backward); clear_grad() keeps the views (zeroed), clear_grad(false) drops
// them and the next backward writes the new gradients into the slots once.
TEST(DataParallel, GradientsAreBucketViewsUnderEitherClearGrad) {
  dist::TCPStoreServer server({.insecure = true});
  auto results = testing::run_ranks(
      2,
      [&](int rank, int world) {
        dist::init_parallel_env();
        seed(7);
        auto net = std::make_shared<TinyNet>();
        seed(7);
        TinyNet reference;
        DataParallelOptions o;
        o.last_comm_buffer_bytes = 64;
        o.comm_buffer_bytes = 64;
        DataParallel dp(net, o);
        const auto params = net->parameters();
        const auto& buckets = dp.reducer()->buckets();
        auto bucket_of = [&](size_t p) -> const Tensor& {
          for (const auto& b : buckets)
            for (size_t q : b.params)
              if (q == p) return b.flat;
          CREW_THROW(InternalError, "parameter ", p, " is in no bucket");
        };
        auto is_view = [&](size_t p) {
          return params[p].grad().defined() && params[p].grad().shares_storage(bucket_of(p));
        };
        // A hook registered after DataParallel's runs right after the reducer's for that parameter.
        std::vector<int> view_at_hook(params.size(), 0);
        for (size_t p = 0; p < params.size(); ++p)
          autograd::register_grad_ready_hook(params[p],
                                             [&, p](const Tensor&) { view_at_hook[p] += is_view(p); });
        auto expected = [&](int step) {
          std::vector<std::vector<float>> avg;
          for (int r = 0; r < world; ++r) {
            auto g = local_grads(reference, rank_input(r, step));
            if (avg.empty()) avg.assign(g.size(), {});
            for (size_t i = 0; i < g.size(); ++i) {
              avg[i].resize(g[i].size(), 0.0f);
              for (size_t k = 0; k < g[i].size(); ++k) avg[i][k] += g[i][k] / world;
            }
          }
          return avg;
        };
        sum(dp(rank_input(rank, 0))).backward();
        for (size_t p = 0; p < params.size(); ++p)
          CREW_CHECK(is_view(p), "step 0: param ", p, " is a bucket view");
        expect_grads_near(params, expected(0));
        // clear_grad() (set_to_zero): the same views, zeroed; backward adds into them.
        std::vector<Tensor> kept;
        for (const auto& p : params) kept.push_back(p.grad());
        net->clear_gradients(/*set_to_zero=*/true);
        for (size_t p = 0; p < params.size(); ++p) {
          CREW_CHECK(params[p].grad().is_same(kept[p]), "clear_grad() keeps the view of param ", p);
          for (float v : params[p].grad().to_vector<float>()) CREW_CHECK(v == 0.0f, "zeroed");
        }
        sum(dp(rank_input(rank, 1))).backward();
        for (size_t p = 0; p < params.size(); ++p)
          CREW_CHECK(params[p].grad().is_same(kept[p]), "step 1: same view");
        expect_grads_near(params, expected(1));
        // clear_grad(false): dropped (None, as Paddle); the next backward hands back the views.
        net->clear_gradients(/*set_to_zero=*/false);
        for (const auto& p : params) CREW_CHECK(!p.grad().defined(), "clear_grad(false) drops the gradient");
        std::fill(view_at_hook.begin(), view_at_hook.end(), 0);
        sum(dp(rank_input(rank, 2))).backward();
        for (size_t p = 0; p < params.size(); ++p) {
          CREW_CHECK(is_view(p), "step 2: param ", p, " is a bucket view again");
          CREW_CHECK_EQ(view_at_hook[p], 1, "param ", p, " is a view as soon as its hook ran");
        }
        expect_grads_near(params, expected(2));
      },
      dist_options(server));
  testing::expect_all_ok(results);
}

TEST(DataParallel, UnusedParametersNeedTheOption) {
  dist::TCPStoreServer server({.insecure = true});
  auto results = testing::run_ranks(
      2,
      [&](int rank, int) {
        dist::init_parallel_env();
        auto net = std::make_shared<TinyNet>(/*with_unused=*/true);
        {
          DataParallel dp(net);
          try {
            dp(rank_input(rank, 0));
            CREW_THROW(InternalError, "expected a StateError for the unused parameter");
          } catch (const StateError& e) {
            std::string msg = e.what();
            CREW_CHECK(msg.find("unused.weight") != std::string::npos, "message names the parameter: ", msg);
            CREW_CHECK(msg.find("find_unused_parameters") != std::string::npos,
                       "message suggests the option: ", msg);
          }
        }
        DataParallelOptions o;
        o.find_unused_parameters = true;
        DataParallel dp(net, o);
        sum(dp(rank_input(rank, 0))).backward();
        auto named = net->named_parameters();
        for (auto& [name, p] : named) {
          CREW_CHECK(p.grad().defined(), name, " has a gradient");
          if (name.rfind("unused.", 0) == 0) {
            for (float v : p.grad().to_vector<float>()) CREW_CHECK(v == 0.0f, name, " gradient is zero");
          }
        }
      },
      dist_options(server));
  testing::expect_all_ok(results);
}

TEST(DataParallel, UnevenDataGivesEveryRankAnError) {
  dist::TCPStoreServer server({.insecure = true});
  auto options = dist_options(server);
  options.timeout = 60s;
  auto results = testing::run_ranks(
      2,
      [&](int rank, int) {
        dist::init_parallel_env();
        auto net = std::make_shared<TinyNet>();
        DataParallel dp(net);
        const int steps = rank == 0 ? 3 : 2;  // as a plain BatchSampler over unequal shards would do
        for (int s = 0; s < steps; ++s) {
          sum(dp(rank_input(rank, s))).backward();
          net->clear_gradients();
        }
      },
      options);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_FALSE(results[0].ok());
  EXPECT_NE(results[0].error.find("DistributedBatchSampler"), std::string::npos)
      << testing::describe(results[0]);
  EXPECT_NE(results[0].error.find("rank 1 finished after 2 steps"), std::string::npos)
      << testing::describe(results[0]);
  EXPECT_FALSE(results[0].timed_out);
  EXPECT_EQ(results[1].exit_code, 1) << testing::describe(results[1]);
  EXPECT_FALSE(results[1].timed_out);
}

TEST(DataParallel, NeedsInitInAParallelEnvironment) {
  testing::RunRanksOptions o;
  o.env = {{"CREW_RANK", "0"}, {"CREW_WORLD_SIZE", "2"}};
  auto results = testing::run_ranks(
      1,
      [&](int, int) {
        auto net = std::make_shared<TinyNet>();
        try {
          DataParallel dp(net);
        } catch (const StateError& e) {
          CREW_CHECK(std::string(e.what()) == dist::kNotInitializedMessage, "message: ", e.what());
          return;
        }
        CREW_THROW(InternalError, "expected StateError");
      },
      o);
  testing::expect_all_ok(results);
}

// The device seam under DataParallel: two ranks train the seed's CNN on the fake device (host
// memory that host code may not touch, every kernel through its slot's fake entry, the
// collectives staged through host memory by StagedProcessGroup) and end with the parameters
// two ranks on the CPU end with, bit for bit.
// `steps` Adam steps of DataParallel(MyNet) on `place`, 8 samples per rank and step; writes
// the rank's final parameters (float32 bytes, in order) to `path`.
void train_on(const Place& place, int rank, int steps, const std::string& path) {
  std::optional<testing::FakeDevice> fake;
  std::optional<testing::FakeKernels> fake_kernels;
  if (place.type == DeviceType::FAKE) {
    fake.emplace();
    fake_kernels.emplace();
  }
  dist::init_parallel_env();
  dist::ProcessGroup* pg = dist::default_group()->process_group();
  if (auto* debug = dynamic_cast<dist::DebugProcessGroup*>(pg)) pg = &debug->inner();
  const bool staged = dynamic_cast<dist::StagedProcessGroup*>(pg) != nullptr;
  CREW_CHECK(staged == (place.type == DeviceType::FAKE), "rank ", rank, ": staged group ", staged, " on ",
             place.to_string());
  seed(1);
  auto net = std::make_shared<nn::models::MyNet>(10, 1, 28);
  net->to(place);
  auto dp = std::make_shared<DataParallel>(net);
  optim::Adam opt(net->parameters());
  Generator data(100 + static_cast<uint64_t>(rank));
  for (int step = 0; step < steps; ++step) {
    const Tensor x = uniform({8, 1, 28, 28}, 0.0, 1.0, DType::FLOAT32, &data);
    std::vector<int64_t> labels;
    for (int i = 0; i < 8; ++i) labels.push_back(static_cast<int64_t>(data.next_u64() % 10));
    Tensor loss = F::cross_entropy((*dp)(x.to(place)), Tensor::from_vector(labels).to(place));
    loss.backward();
    opt.step();
    opt.clear_grad();
  }
  std::ofstream out(path, std::ios::binary);
  for (const Tensor& p : net->parameters()) {
    CREW_CHECK(p.place() == place, "parameter on ", p.place().to_string());
    const std::vector<float> v = p.cpu().to_vector<float>();
    out.write(reinterpret_cast<const char*>(v.data()),
              static_cast<std::streamsize>(v.size() * sizeof(float)));
  }
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(DataParallelFakeDevice, TwoRanksTrainAsOnTheCpuBitForBit) {
  constexpr int kSteps = 3;
  testing::TempDir dir;
  auto run = [&](const Place& place, const std::string& tag) {
    dist::TCPStoreServer server({.insecure = true});
    testing::expect_all_ok(testing::run_ranks(
        2, [&](int r, int) { train_on(place, r, kSteps, dir.file(tag + std::to_string(r))); },
        dist_options(server)));
  };
  run(CPUPlace(), "cpu");
  run(Place{DeviceType::FAKE, 0}, "fake");
  for (int r = 0; r < 2; ++r) {
    const std::string cpu = read_file(dir.file("cpu" + std::to_string(r)));
    ASSERT_GT(cpu.size(), 0u);
    EXPECT_TRUE(cpu == read_file(dir.file("fake" + std::to_string(r)))) << "rank " << r;
  }
  EXPECT_TRUE(read_file(dir.file("cpu0")) == read_file(dir.file("cpu1")));  // DataParallel kept them in step
}

}  // namespace
}  // namespace crew
