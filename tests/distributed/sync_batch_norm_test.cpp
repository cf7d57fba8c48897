// SyncBatchNorm on real ranks: 2 ranks x 4 samples against 1 process x 8, for a conv ->
// BatchNorm2D net converted by convert_sync_batchnorm under DataParallel, and for a
// SyncBatchNorm built directly over [N, C] input; plain BatchNorm2D on 2 ranks differs.
#include "crew/distributed/sync_batch_norm/sync_batch_norm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "crew/autograd/ops.h"
#include "crew/core/check.h"
#include "crew/distributed/data_parallel/data_parallel.h"
#include "crew/distributed/store/tcp_store_server.h"
#include "crew/nn/batch_norm.h"
#include "crew/nn/conv.h"
#include "crew/tensor/random.h"
#include "crew/tensor/safetensors.h"
#include "tests/testing/multiprocess.h"
#include "tests/testing/temp_dir.h"

namespace crew {
namespace {

using namespace std::chrono_literals;
constexpr int64_t kBatch = 8;

class ConvBn : public nn::Layer {
 public:
  ConvBn() : Layer("conv_bn") {
    nn::Conv2DOptions o;
    o.padding = 1;
    conv_ = register_sublayer("conv", std::make_shared<nn::Conv2D>(2, 3, nn::Size2(3), o));
    bn_ = register_sublayer("bn", std::make_shared<nn::BatchNorm2D>(3));
  }
  Tensor forward(const Tensor& x) override { return (*bn_)((*conv_)(x)); }
  std::shared_ptr<nn::Conv2D> conv_;
  std::shared_ptr<nn::BatchNorm2D> bn_;
};

enum class Mode { SYNC, PLAIN };

Tensor rows(const Tensor& t, int rank, int world) {
  const int64_t per = t.size(0) / world;
  return t.slice(rank * per, (rank + 1) * per).clone();
}

Tensor leaf(Tensor t) {
  t.set_stop_gradient(false);
  return t;
}

// One training step (mean loss of out * r over this rank's rows) and one eval forward of the
// converted conv -> batch norm net, then of a SyncBatchNorm over [N, 4]; every value a test
// compares goes into <dir>/<mode>_<world>_<rank>.safetensors.
void run_rank(int rank, int world, Mode mode, const std::string& dir) {
  Generator data(42);
  Tensor x_all = uniform({kBatch, 2, 4, 4}, -1.0, 2.0, DType::FLOAT32, &data);
  Tensor r_all = uniform({kBatch, 3, 4, 4}, -1.0, 1.0, DType::FLOAT32, &data);
  Tensor z_all = uniform({kBatch, 4}, -3.0, 1.0, DType::FLOAT32, &data);
  if (world > 1) dist::init_parallel_env();
  seed(1);
  auto net = std::make_shared<ConvBn>();
  std::shared_ptr<nn::Layer> model = net;
  if (world > 1) model = std::make_shared<DataParallel>(net);
  // Converting the DataParallel reaches the wrapped net; in the 1-process run nothing is
  // initialised, so the converted layers are plain batch norms.
  if (mode == Mode::SYNC) CREW_CHECK(SyncBatchNorm::convert_sync_batchnorm(model) == model);
  CREW_CHECK((net->bn_->stats_sync() != nullptr) == (mode == Mode::SYNC));
  StateDict out;
  Tensor x = leaf(rows(x_all, rank, world));
  Tensor y = (*model)(x);
  mean(mul(y, rows(r_all, rank, world))).backward();
  out.insert("y", y.detach());
  out.insert("x_grad", x.grad());
  for (auto& [name, p] : net->named_parameters()) out.insert(name + ".grad", p.grad());
  for (auto& [name, b] : net->named_buffers()) out.insert(name, b);
  model->eval();
  out.insert("eval_y", (*model)(x).detach());

  SyncBatchNorm sbn(4, 0.8);
  Tensor z = leaf(rows(z_all, rank, world));
  Tensor v = sbn(z);
  sum(mul(v, v)).backward();  // sum loss: the ranks' losses add up to the 1-process one
  out.insert("sbn.y", v.detach());
  out.insert("sbn.x_grad", z.grad());
  out.insert("sbn.weight.grad", sbn.weight().grad());
  out.insert("sbn._variance", sbn.running_variance());
  crew::save(out, dir + "/" + (mode == Mode::SYNC ? "sync_" : "plain_") + std::to_string(world) + "_" +
                      std::to_string(rank) + ".safetensors");
}

testing::RunRanksOptions job_options(const dist::TCPStoreServer& server, const std::string& backend) {
  testing::RunRanksOptions o;
  o.timeout = 60s;
  o.set_rank_env = true;
  o.env = {{"CREW_MASTER", "127.0.0.1:" + std::to_string(server.port())},
           {"CREW_STORE_HOSTED", "1"},
           {"CREW_NUM_THREADS", "1"},
           {"CREW_TIMEOUT", "30s"},
           {"CREW_BACKEND", backend}};
  return o;
}

void run_job(int world, Mode mode, const std::string& dir, const std::string& backend = "auto") {
  dist::TCPStoreServer server({.insecure = true});
  testing::expect_all_ok(testing::run_ranks(
      world, [&](int r, int w) { run_rank(r, w, mode, dir); }, job_options(server, backend)));
}

// |a - b| / |b| over all elements (L2), b scaled by `scale`.
double relative_difference(const Tensor& a, const Tensor& b, double scale = 1.0) {
  auto va = a.to_vector<double>(), vb = b.to_vector<double>();
  CREW_CHECK_EQ(va.size(), vb.size());
  double diff = 0, norm = 0;
  for (size_t i = 0; i < va.size(); ++i) {
    diff += (va[i] - scale * vb[i]) * (va[i] - scale * vb[i]);
    norm += scale * vb[i] * scale * vb[i];
  }
  return std::sqrt(diff) / std::max(std::sqrt(norm), 1e-12);
}

StateDict load_result(const testing::TempDir& dir, const std::string& name) {
  return crew::load(dir.file(name + ".safetensors"));
}

void expect_two_ranks_equal_one(const testing::TempDir& dir) {
  const StateDict one = load_result(dir, "sync_1_0");
  std::vector<double> sbn_weight_grad(4, 0.0);
  for (int rank = 0; rank < 2; ++rank) {
    const StateDict mine = load_result(dir, "sync_2_" + std::to_string(rank));
    for (const char* key : {"y", "eval_y", "sbn.y", "sbn.x_grad"}) {
      EXPECT_LE(relative_difference(mine.at(key), rows(one.at(key), rank, 2)), 1e-5)
          << key << " rank " << rank;
    }
    // The input gradient is that of the sum of the ranks' mean losses: twice the 1-process one.
    EXPECT_LE(relative_difference(mine.at("x_grad"), rows(one.at("x_grad"), rank, 2), 2.0), 1e-5) << rank;
    // Parameter gradients: the average over the ranks (DataParallel's) equals the 1-process one.
    // (Not conv.bias: batch norm cancels a per-channel shift, so its gradient is rounding noise.)
    for (const char* key : {"bn._mean", "bn._variance", "sbn._variance", "conv.weight.grad", "bn.weight.grad",
                            "bn.bias.grad"}) {
      EXPECT_LE(relative_difference(mine.at(key), one.at(key)), 1e-5) << key << " rank " << rank;
    }
    // SyncBatchNorm outside DataParallel: local weight gradients, which sum to the whole one.
    // (Summed here in doubles: no kernels in the parent, which forks more ranks later.)
    auto g = mine.at("sbn.weight.grad").to_vector<double>();
    for (size_t c = 0; c < g.size(); ++c) sbn_weight_grad[c] += g[c];
  }
  EXPECT_LE(relative_difference(Tensor::from_vector(sbn_weight_grad), one.at("sbn.weight.grad")), 1e-5);
}

TEST(SyncBatchNorm, TwoRanksOfFourEqualOneProcessOfEight) {
  testing::TempDir dir;
  run_job(1, Mode::SYNC, dir.path());
  run_job(2, Mode::SYNC, dir.path());
  expect_two_ranks_equal_one(dir);
}

TEST(SyncBatchNorm, OverGlooTooAndPlainBatchNormDiffers) {
  testing::TempDir dir;
  run_job(1, Mode::SYNC, dir.path());
  run_job(2, Mode::SYNC, dir.path(), "gloo");
  expect_two_ranks_equal_one(dir);
  run_job(2, Mode::PLAIN, dir.path());
  const StateDict one = load_result(dir, "sync_1_0");
  const StateDict plain = load_result(dir, "plain_2_0");
  EXPECT_GT(relative_difference(plain.at("y"), rows(one.at("y"), 0, 2)), 1e-3);
  EXPECT_GT(relative_difference(plain.at("bn._mean"), one.at("bn._mean")), 1e-3);
}

}  // namespace
}  // namespace crew
