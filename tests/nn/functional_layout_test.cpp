// Activations kept in oneDNN's blocked layout between conv, relu and max_pool
// (crew/tensor/kernels/dnnl_layout.h): the chain gives what it gives with every
// intermediate converted to row-major, forward and backward, and the layout really is kept.
#include "crew/autograd/function.h"
#include "crew/autograd/ops.h"
#include "crew/nn/functional_extra.h"
#include "crew/tensor/kernels/activation.h"
#include "crew/tensor/kernels/batch_norm.h"
#include "crew/tensor/kernels/broadcast.h"
#include "crew/tensor/kernels/dnnl_layout.h"
#include "tests/nn/functional_test_util.h"

namespace crew {
namespace {

using namespace nn::functional_testing;

// Identity that hands on a row-major copy, forward and backward.
Tensor plain(const Tensor& x) {
  Tensor y = x.clone();
  if (autograd::should_record({&x})) {
    autograd::record(y, "plain", {x}, [](const Tensor& g, const std::vector<bool>&) {
      return std::vector<Tensor>{g.clone()};
    });
  }
  return y;
}

// One run of a small net: whether what should stay blocked did, and named values (the
// output, then gradients) to compare with the run whose intermediates are all row-major.
struct LayoutRun {
  bool blocked = false;
  std::vector<std::pair<const char*, std::vector<float>>> values;
  void add(const char* name, const Tensor& t) { values.emplace_back(name, t.to_vector<float>()); }
};

// conv -> relu -> max_pool -> conv -> relu, each step optionally through plain().
LayoutRun run_chain(bool force_plain) {
  auto step = [&](const Tensor& t) { return force_plain ? plain(t) : t; };
  Tensor x = random_input({3, 16, 12, 12}, DType::FLOAT32, 1);
  Tensor w1 = random_input({32, 16, 3, 3}, DType::FLOAT32, 2);
  Tensor w2 = random_input({32, 32, 3, 3}, DType::FLOAT32, 3);
  Tensor weights = random_input({3, 32, 4, 4}, DType::FLOAT32, 4).set_stop_gradient(true);
  Tensor c1 = step(F::conv2d(x, w1, Tensor(), {1, 1}, {1, 1}));
  Tensor r1 = step(F::relu(c1));
  Tensor p1 = step(F::max_pool2d(r1, {2, 2}, {2, 2}));
  Tensor c2 = step(F::conv2d(p1, w2, Tensor()));
  Tensor y = F::relu(c2);
  LayoutRun r;
  r.blocked = c1.layout() != nullptr && r1.layout() != nullptr && p1.layout() != nullptr && y.layout() != nullptr;
  sum(y * weights).backward();
  r.add("output", y);
  r.add("grad x", x.grad());
  r.add("grad w1", w1.grad());
  r.add("grad w2", w2.grad());
  return r;
}

void expect_near_all(const std::vector<float>& a, const std::vector<float>& b, const char* what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_NEAR(a[i], b[i], 1e-5 * (1 + std::abs(b[i]))) << what << " element " << i;
  }
}

// The blocked run kept its layout, the row-major one did not, and their values agree.
void expect_same_runs(const LayoutRun& blocked, const LayoutRun& row_major, const char* not_blocked) {
  EXPECT_TRUE(blocked.blocked) << not_blocked;
  EXPECT_FALSE(row_major.blocked);
  ASSERT_EQ(blocked.values.size(), row_major.values.size());
  for (size_t i = 0; i < blocked.values.size(); ++i)
    expect_near_all(blocked.values[i].second, row_major.values[i].second, blocked.values[i].first);
}

TEST(FunctionalLayoutTest, BlockedChainEqualsTheRowMajorChainForwardAndBackward) {
  // oneDNN's direct convolutions want channel blocks on any x86 with AVX2 or better.
  expect_same_runs(run_chain(false), run_chain(true), "conv/relu/max_pool outputs were not kept blocked");
}

// A residual block: relu(bn(conv1(x)) + conv2(x)), each step optionally through plain(); x
// reaches the loss by two paths, so backward sums two gradients in the engine.
LayoutRun run_residual(bool force_plain) {
  auto step = [&](const Tensor& t) { return force_plain ? plain(t) : t; };
  Tensor x = random_input({2, 16, 6, 6}, DType::FLOAT32, 7);
  Tensor w1 = random_input({32, 16, 3, 3}, DType::FLOAT32, 8);
  Tensor w2 = random_input({32, 16, 1, 1}, DType::FLOAT32, 9);
  Tensor gamma = random_input({32}, DType::FLOAT32, 10);
  Tensor mean = Tensor::zeros({32}), var = Tensor::ones({32});
  Tensor weights = random_input({2, 32, 6, 6}, DType::FLOAT32, 11).set_stop_gradient(true);
  Tensor c1 = step(F::conv2d(x, w1, Tensor(), {1, 1}, {1, 1}));
  Tensor b1 = step(F::batch_norm(c1, mean, var, gamma, Tensor(), true));
  Tensor added = b1 + step(F::conv2d(x, w2, Tensor()));
  LayoutRun r;
  r.blocked = added.layout() != nullptr;
  Tensor y = F::relu(added);
  sum(y * weights).backward();
  r.add("output", y);
  r.add("grad x", x.grad());
  r.add("grad w1", w1.grad());
  r.add("grad w2", w2.grad());
  r.add("grad gamma", gamma.grad());
  return r;
}

TEST(FunctionalLayoutTest, ResidualSumStaysBlockedAndEqualsTheRowMajorBlock) {
  expect_same_runs(run_residual(false), run_residual(true),
                   "the sum of two blocked tensors was converted to row-major");
}

TEST(FunctionalLayoutTest, AddInplaceOfOneBlockedLayoutKeepsIt) {
  Tensor x = random_input({2, 16, 5, 5}, DType::FLOAT32, 12).set_stop_gradient(true);
  Tensor w = random_input({24, 16, 3, 3}, DType::FLOAT32, 13).set_stop_gradient(true);
  Tensor a = F::conv2d(x, w, Tensor(), {1, 1}, {1, 1});  // 24 channels: a padded 16-block layout
  Tensor b = F::conv2d(kernels::affine(x, 2.0, 0.0), w, Tensor(), {1, 1}, {1, 1});
  ASSERT_NE(a.layout(), nullptr);
  ASSERT_EQ(a.layout(), b.layout());
  Tensor diff = b - a;  // SUB in the layout too
  EXPECT_NE(diff.layout(), nullptr);
  kernels::add_inplace(a, b);
  EXPECT_NE(a.layout(), nullptr) << "add_inplace converted dst to row-major";
  const std::vector<float> sum = a.to_vector<float>(), bv = b.to_vector<float>();
  const std::vector<float> dv = diff.to_vector<float>();
  for (size_t i = 0; i < sum.size(); ++i) {
    ASSERT_NEAR(sum[i], 1.5f * bv[i], 1e-4 * (1 + std::abs(bv[i]))) << i;  // a = b / 2
    ASSERT_NEAR(dv[i], 0.5f * bv[i], 1e-4 * (1 + std::abs(bv[i]))) << i;
  }
}

// A row-major gradient reaching a backward kernel whose saved input is blocked (after an op
// without a blocked kernel, e.g. a flatten before a Linear): the gradient is reordered, the
// saved input stays blocked and so does the gradient handed on to the conv before.
TEST(FunctionalLayoutTest, RowMajorGradientMeetsBlockedSavedInput) {
  Tensor x = random_input({2, 16, 5, 5}, DType::FLOAT32, 14).set_stop_gradient(true);
  Tensor w = random_input({24, 16, 3, 3}, DType::FLOAT32, 15).set_stop_gradient(true);
  Tensor c = F::conv2d(x, w, Tensor(), {1, 1}, {1, 1});
  ASSERT_NE(c.layout(), nullptr);
  Tensor c_plain = F::conv2d(x, w, Tensor(), {1, 1}, {1, 1}).clone();  // (c.clone() would convert c)
  ASSERT_EQ(c_plain.layout(), nullptr);
  Tensor g = random_input({2, 24, 5, 5}, DType::FLOAT32, 16).set_stop_gradient(true);
  Tensor gamma = random_input({24}, DType::FLOAT32, 17).set_stop_gradient(true);
  kernels::BatchNormStats stats, plain_stats;
  kernels::batch_norm_forward(c, gamma, Tensor(), 1e-5, stats);
  kernels::batch_norm_forward(c_plain, gamma, Tensor(), 1e-5, plain_stats);
  kernels::BatchNormGrads blocked = kernels::batch_norm_backward(g, c, gamma, Tensor(), 1e-5, stats);
  kernels::BatchNormGrads row_major =
      kernels::batch_norm_backward(g, c_plain, gamma, Tensor(), 1e-5, plain_stats);
  EXPECT_NE(c.layout(), nullptr) << "batch_norm backward converted its saved input";
  EXPECT_NE(blocked.x.layout(), nullptr) << "batch_norm backward's grad x is not blocked";
  expect_near_all(blocked.x.to_vector<float>(), row_major.x.to_vector<float>(), "bn grad x");
  expect_near_all(blocked.weight.to_vector<float>(), row_major.weight.to_vector<float>(), "bn grad gamma");
  Tensor y = kernels::activation_forward(kernels::Activation::RELU, c);
  ASSERT_NE(y.layout(), nullptr);
  Tensor gy = kernels::activation_backward(kernels::Activation::RELU, g, Tensor(), y, false);
  EXPECT_NE(y.layout(), nullptr) << "relu backward converted its saved output";
  EXPECT_NE(gy.layout(), nullptr) << "relu backward's grad x is not blocked";
  const std::vector<float> gv = g.to_vector<float>(), yv = y.to_vector<float>(), got = gy.to_vector<float>();
  for (size_t i = 0; i < gv.size(); ++i) ASSERT_EQ(got[i], yv[i] > 0 ? gv[i] : 0.0f) << i;
}

// hardtanh (Paddle's relu6 too) on a conv's output: blocked in, blocked out, and the same
// values and gradients as on a row-major copy.
TEST(FunctionalLayoutTest, HardtanhKeepsTheBlockedLayout) {
  auto run = [](bool force_plain) {
    Tensor x = random_input({2, 16, 5, 5}, DType::FLOAT32, 18);
    Tensor w = random_input({24, 16, 3, 3}, DType::FLOAT32, 19);
    Tensor weights = random_input({2, 24, 5, 5}, DType::FLOAT32, 20).set_stop_gradient(true);
    Tensor c = F::conv2d(x, w, Tensor(), {1, 1}, {1, 1});
    Tensor y = nn::functional::hardtanh(force_plain ? plain(c) : c, -0.5, 0.5);  // clips on both sides
    LayoutRun r;
    r.blocked = y.layout() != nullptr;
    sum(y * weights).backward();
    r.add("output", y);
    r.add("grad x", x.grad());
    r.add("grad w", w.grad());
    return r;
  };
  expect_same_runs(run(false), run(true), "hardtanh converted its blocked input");
}

// The global average pool of a conv net's last (blocked) activation keeps it blocked, and
// equals the pool of a row-major copy (1x1 bins and 2x2 bins of equal size).
TEST(FunctionalLayoutTest, AdaptiveAvgPoolOfEqualBinsReadsTheBlockedLayout) {
  for (const F::Pair out : {F::Pair{1, 1}, F::Pair{2, 2}}) {
    auto run = [&](bool force_plain) {
      Tensor x = random_input({2, 16, 4, 6}, DType::FLOAT32, 23);
      Tensor w = random_input({24, 16, 3, 3}, DType::FLOAT32, 24);
      Tensor c = F::relu(F::conv2d(x, w, Tensor(), {1, 1}, {1, 1}));
      Tensor y = F::adaptive_avg_pool2d(force_plain ? plain(c) : c, out);
      LayoutRun r;
      r.blocked = c.layout() != nullptr;
      sum(y * random_input(y.shape(), DType::FLOAT32, 25).set_stop_gradient(true)).backward();
      r.blocked = r.blocked && c.layout() != nullptr;  // after backward too
      r.add("output", y);
      r.add("grad x", x.grad());
      r.add("grad w", w.grad());
      return r;
    };
    expect_same_runs(run(false), run(true), "adaptive_avg_pool2d converted its blocked input");
  }
}

// A primitive that wants row-major data reading a blocked tensor gets a row-major copy; the
// tensor stays blocked for its other readers.
TEST(FunctionalLayoutTest, RowMajorReaderOfABlockedTensorLeavesItBlocked) {
  Tensor x = random_input({2, 16, 4, 4}, DType::FLOAT32, 21).set_stop_gradient(true);
  Tensor w = random_input({32, 16, 3, 3}, DType::FLOAT32, 22).set_stop_gradient(true);
  Tensor c = F::conv2d(x, w, Tensor(), {1, 1}, {1, 1});
  ASSERT_NE(c.layout(), nullptr);
  const Tensor want = F::conv2d(x, w, Tensor(), {1, 1}, {1, 1}).clone();
  const dnnl::memory::desc plain_md = kernels::detail::plain_desc(kernels::detail::to_dims(c.shape()));
  dnnl::memory m = kernels::detail::input_memory(kernels::detail::LayoutBridge(plain_md, plain_md), c);
  EXPECT_NE(c.layout(), nullptr) << "the reader converted the tensor in place";
  const auto* got = static_cast<const float*>(m.get_data_handle());
  const std::vector<float> wv = want.to_vector<float>();
  for (size_t i = 0; i < wv.size(); ++i) ASSERT_EQ(got[i], wv[i]) << i;
}

TEST(FunctionalLayoutTest, EveryOtherReaderSeesRowMajorData) {
  Tensor x = random_input({2, 16, 6, 6}, DType::FLOAT32, 5).set_stop_gradient(true);
  Tensor w = random_input({16, 16, 3, 3}, DType::FLOAT32, 6).set_stop_gradient(true);
  Tensor y = F::conv2d(x, w, Tensor(), {1, 1}, {1, 1});
  Tensor alias = y.detach();           // shares the storage, still blocked
  Tensor flat = y.view({2, 16 * 36});  // another shape over the same storage
  Tensor expected = F::conv2d(plain(x), w, Tensor(), {1, 1}, {1, 1}).clone();  // row-major copy
  const std::vector<float> want = expected.to_vector<float>();
  EXPECT_EQ(flat.to_vector<float>(), want);  // converts the shared storage in place
  EXPECT_EQ(y.layout(), nullptr);
  EXPECT_EQ(alias.layout(), nullptr);
  EXPECT_EQ(alias.to_vector<float>(), want);
  alias.data<float>()[0] = 42.0f;  // one storage for all three
  EXPECT_EQ(y.to_vector<float>()[0], 42.0f);
}

}  // namespace
}  // namespace crew
