// crew::amp autocast (crew/autograd/autocast.h): inside a guard white-list ops compute in the
// low dtype, black-list ops and ops without a 16-bit kernel in float32, the others keep or
// promote; float32 leaves get float32 gradients; the state nests, is per thread, and is off
// during backward.
#include "crew/autograd/autocast.h"

#include <gtest/gtest.h>

#include <functional>
#include <thread>

#include "crew/autograd/autograd.h"
#include "crew/autograd/ops.h"
#include "crew/autograd/ops_math.h"
#include "crew/core/error.h"
#include "crew/nn/functional.h"
#include "crew/nn/functional_extra.h"
#include "crew/tensor/kernels/low_precision.h"
#include "crew/tensor/random.h"

namespace crew {
namespace {

namespace F = nn::functional;
using amp::AmpLevel;
using amp::AutocastGuard;
using amp::AutocastOptions;

AutocastOptions bf16(AmpLevel level = AmpLevel::O1) {
  AutocastOptions o;
  o.dtype = DType::BFLOAT16;
  o.level = level;
  return o;
}

Tensor param(const Shape& shape) { return uniform(shape, -0.5, 0.5).set_stop_gradient(false); }

TEST(Autocast, WhiteListOpsRunInTheLowDtypeAndBlackListOpsInFloat32) {
  Tensor x = uniform({2, 3, 8, 8}, -1, 1);
  Tensor w = param({4, 3, 3, 3});
  Tensor lw = param({4 * 6 * 6, 5});
  Tensor lb = param({5});
  AutocastGuard guard(bf16());
  Tensor y = F::conv2d(x, w, Tensor());
  EXPECT_EQ(y.dtype(), DType::BFLOAT16);
  EXPECT_EQ(F::relu(y).dtype(), DType::BFLOAT16);                // gray, one operand: keeps its dtype
  EXPECT_EQ(F::max_pool2d(y, {2, 2}).dtype(), DType::BFLOAT16);  // gray, with a 16-bit kernel
  Tensor logits = F::linear(F::flatten(y), lw, lb);
  EXPECT_EQ(logits.dtype(), DType::BFLOAT16);
  EXPECT_EQ(F::softmax(logits).dtype(), DType::FLOAT32);
  EXPECT_EQ(F::cross_entropy(logits, Tensor::from_vector<int64_t>({0, 4}, {2})).dtype(), DType::FLOAT32);
  EXPECT_EQ(F::layer_norm(logits, {5}, Tensor(), Tensor()).dtype(), DType::FLOAT32);
  EXPECT_EQ(mean(logits).dtype(), DType::FLOAT32);
  EXPECT_EQ(sum(logits, 1).dtype(), DType::FLOAT32);
  EXPECT_EQ(matmul(uniform({2, 3}, -1, 1), uniform({3, 2}, -1, 1)).dtype(), DType::BFLOAT16);
  // Mixed operands of a gray op meet in float32 at O1.
  EXPECT_EQ(add(logits, uniform({2, 5}, -1, 1)).dtype(), DType::FLOAT32);
  // float64 is never cast.
  EXPECT_EQ(
      matmul(uniform({2, 3}, -1, 1).to(DType::FLOAT64), uniform({3, 2}, -1, 1).to(DType::FLOAT64)).dtype(),
      DType::FLOAT64);
}

TEST(Autocast, Float32LeavesGetFloat32Gradients) {
  Tensor x = uniform({4, 6}, -1, 1);
  Tensor w = param({6, 3});
  Tensor b = param({3});
  Tensor loss;
  {
    AutocastGuard guard(bf16());
    loss = F::cross_entropy(F::linear(x, w, b), Tensor::from_vector<int64_t>({0, 1, 2, 0}, {4}));
    loss.backward();  // inside the guard: backward runs with autocast off
  }
  ASSERT_TRUE(w.grad().defined());
  EXPECT_EQ(w.grad().dtype(), DType::FLOAT32);
  EXPECT_EQ(b.grad().dtype(), DType::FLOAT32);
  // The gradient is the float32 one within bfloat16's rounding.
  Tensor w2 = w.detach().clone().set_stop_gradient(false);
  Tensor b2 = b.detach().clone().set_stop_gradient(false);
  F::cross_entropy(F::linear(x, w2, b2), Tensor::from_vector<int64_t>({0, 1, 2, 0}, {4})).backward();
  const auto g = w.grad().to_vector<float>(), want = w2.grad().to_vector<float>();
  for (size_t i = 0; i < g.size(); ++i) EXPECT_NEAR(g[i], want[i], 2e-2) << i;
}

TEST(Autocast, BackwardAndItsHooksRunWithAutocastOff) {
  Tensor w = param({3, 3});
  DType seen = DType::INT64;
  autograd::register_grad_ready_hook(w, [&seen](const Tensor& leaf) {
    seen = matmul(leaf.grad(), leaf.grad()).dtype();  // a white-list op inside backward
  });
  AutocastGuard guard(bf16());
  sum(F::linear(uniform({2, 3}, -1, 1), w, Tensor())).backward();
  EXPECT_EQ(seen, DType::FLOAT32);
  EXPECT_TRUE(amp::autocast_enabled());  // restored after backward
}

TEST(Autocast, OpsWithoutA16BitKernelTakeTheConvsOutput) {
  Tensor x = uniform({1, 2, 6, 6}, -1, 1);
  AutocastGuard guard(bf16());
  Tensor y = F::conv2d(x, param({4, 2, 3, 3}), Tensor());
  ASSERT_EQ(y.dtype(), DType::BFLOAT16);
  EXPECT_EQ(F::elu(y).dtype(), DType::FLOAT32);
  EXPECT_EQ(F::hardtanh(y).dtype(), DType::FLOAT32);
  EXPECT_EQ(F::local_response_norm(y, 3).dtype(), DType::FLOAT32);
  EXPECT_EQ(F::resample2d(y, {8, 8}, true).dtype(), DType::FLOAT32);
  // Gray with mixed operands: promoted to float32.
  EXPECT_EQ(F::conv2d_transpose(y, param({4, 2, 3, 3}), Tensor()).dtype(), DType::FLOAT32);
}

// The tensor math of ops_math.h: a 16-bit operand, a DTypeError outside autocast, runs in
// float32 inside (no 16-bit kernel, or Paddle's black list for the reductions), at O1 and O2,
// with the float32 values of the bfloat16 input and a bfloat16 gradient for a bfloat16 leaf.
TEST(Autocast, TensorMathRunsInFloat32) {
  using Op = std::function<Tensor(const Tensor&)>;
  const std::vector<std::pair<std::string, Op>> ops = {
      {"abs", [](const Tensor& t) { return abs(t); }},
      {"sqrt", [](const Tensor& t) { return sqrt(t); }},
      {"rsqrt", [](const Tensor& t) { return rsqrt(t); }},
      {"square", [](const Tensor& t) { return square(t); }},
      {"sin", [](const Tensor& t) { return sin(t); }},
      {"cos", [](const Tensor& t) { return cos(t); }},
      {"tanh", [](const Tensor& t) { return tanh(t); }},
      {"sigmoid", [](const Tensor& t) { return sigmoid(t); }},
      {"erf", [](const Tensor& t) { return erf(t); }},
      {"floor", [](const Tensor& t) { return floor(t); }},
      {"clip", [](const Tensor& t) { return clip(t, 0.7, 0.9); }},
      {"where",
       [](const Tensor& t) {
         return where(Tensor::from_vector<bool>({true, false, true, true}, {4}), t, mul(t, 2.0));
       }},
      {"cumsum", [](const Tensor& t) { return cumsum(t, 1); }},
      {"prod", [](const Tensor& t) { return prod(t, {1}); }},
      {"amax", [](const Tensor& t) { return amax(t, {1}); }},
      {"amin", [](const Tensor& t) { return amin(t, {0}); }},
      {"var", [](const Tensor& t) { return var(t, {1}); }},
      {"std", [](const Tensor& t) { return stddev(t, {}); }},
      {"norm", [](const Tensor& t) { return norm(t, 2.0, {}); }},
      {"topk", [](const Tensor& t) { return topk(t, 2, 1).values; }},
      {"sort", [](const Tensor& t) { return sort(t, 0).values; }},
  };
  const Tensor x16 = uniform({3, 4}, 0.5, 1.5).to(DType::BFLOAT16);
  for (const auto& [name, op] : ops) {
    EXPECT_THROW(op(x16), DTypeError)
        << name << " has a bfloat16 kernel now: move it out of autocast's lists";
    const std::vector<float> want = op(x16.to(DType::FLOAT32)).to_vector<float>();
    for (AmpLevel level : {AmpLevel::O1, AmpLevel::O2}) {
      Tensor leaf = x16.clone().set_stop_gradient(false);
      Tensor y;
      {
        AutocastGuard guard(bf16(level));
        y = op(leaf);
      }
      ASSERT_EQ(y.dtype(), DType::FLOAT32) << name;
      EXPECT_EQ(y.to_vector<float>(), want) << name;
      sum(y).backward();
      ASSERT_TRUE(leaf.grad().defined()) << name;
      EXPECT_EQ(leaf.grad().dtype(), DType::BFLOAT16) << name;
    }
  }
  // Masks of 16-bit operands: computed in float32, exactly.
  const Tensor y16 = uniform({3, 4}, 0.5, 1.5).to(DType::BFLOAT16);
  const std::vector<std::pair<std::string, std::function<Tensor()>>> masks = {
      {"greater_than", [&] { return greater_than(x16, y16); }},
      {"equal", [&] { return equal(x16, x16); }},
      {"isclose", [&] { return isclose(x16, y16, 0.1, 0.0); }},
      {"isfinite", [&] { return isfinite(x16); }},
      {"isnan", [&] { return isnan(x16); }},
  };
  for (const auto& [name, mask] : masks) {
    EXPECT_THROW(mask(), DTypeError) << name << " has a bfloat16 kernel now: move it out of autocast's lists";
    AutocastGuard guard(bf16());
    EXPECT_EQ(mask().dtype(), DType::BOOL) << name;
  }
  {
    AutocastGuard guard(bf16());
    EXPECT_EQ(greater_than(x16, y16).to_vector<bool>(),
              greater_than(x16.to(DType::FLOAT32), y16.to(DType::FLOAT32)).to_vector<bool>());
  }
  // The reductions stay float32 on float32 operands (black list), also at O2.
  AutocastGuard guard(bf16(AmpLevel::O2));
  EXPECT_EQ(cumsum(uniform({3, 4}, 0, 1), 0).dtype(), DType::FLOAT32);
  EXPECT_EQ(var(uniform({3, 4}, 0, 1), {1}).dtype(), DType::FLOAT32);
}

// batch_norm on a bfloat16 conv output: trains in bfloat16 (float32 statistics; bfloat16
// weight and bias, as a decorated C++ model has, are used in float32 and get bfloat16
// gradients), within bfloat16's rounding of the float32 result; inference runs in float32.
TEST(Autocast, BatchNormTrainsInBFloat16WithFloat32Statistics) {
  if (!kernels::dnnl_supports(DType::BFLOAT16, "batch_norm")) GTEST_SKIP() << "no bfloat16 kernels here";
  const Tensor x = uniform({4, 8, 5, 5}, -1, 1).to(DType::BFLOAT16);
  Tensor w16 = uniform({8}, 0.5, 1.5).to(DType::BFLOAT16).set_stop_gradient(false);
  Tensor b16 = uniform({8}, -0.5, 0.5).to(DType::BFLOAT16).set_stop_gradient(false);
  Tensor rm = Tensor::zeros({8}), rv = Tensor::ones({8}), rm32 = Tensor::zeros({8}), rv32 = Tensor::ones({8});
  Tensor y;
  {
    AutocastGuard guard(bf16(AmpLevel::O2));
    y = F::batch_norm(x, rm, rv, w16, b16, /*training=*/true, 0.9, 1e-5);
    // Inference with a gradient to record (w16 requires one) goes through float32.
    EXPECT_EQ(F::batch_norm(x, rm32, rv32, w16, b16, /*training=*/false, 0.9, 1e-5).dtype(), DType::FLOAT32);
  }
  ASSERT_EQ(y.dtype(), DType::BFLOAT16);
  const Tensor y32 = cast(y, DType::FLOAT32);
  sum(y32 * y32).backward();
  EXPECT_EQ(w16.grad().dtype(), DType::BFLOAT16);
  EXPECT_EQ(b16.grad().dtype(), DType::BFLOAT16);
  Tensor rm_ref = Tensor::zeros({8}), rv_ref = Tensor::ones({8});
  const Tensor want = F::batch_norm(x.to(DType::FLOAT32), rm_ref, rv_ref, w16.detach().to(DType::FLOAT32),
                                    b16.detach().to(DType::FLOAT32), true, 0.9, 1e-5);
  const auto got = y.to(DType::FLOAT32).to_vector<float>(), ref = want.to_vector<float>();
  for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], ref[i], 2e-2) << i;
  const auto m = rm.to_vector<float>(), m_ref = rm_ref.to_vector<float>();
  for (size_t i = 0; i < m.size(); ++i) EXPECT_NEAR(m[i], m_ref[i], 1e-6) << "running mean " << i;
}

// layer_norm on a bfloat16 activation: O1 runs it in float32 (Paddle's black list); O2 runs
// the bfloat16 kernel with float32 gamma/beta (bfloat16 ones are cast to float32) and returns
// bfloat16, unless layer_norm is in custom_black_list.
TEST(Autocast, LayerNormStaysBFloat16AtO2) {
  const Tensor x = uniform({4, 16}, -1, 1).to(DType::BFLOAT16);
  const Tensor w = uniform({16}, 0.5, 1.5), b = uniform({16}, -0.5, 0.5);
  {
    AutocastGuard guard(bf16(AmpLevel::O1));
    EXPECT_EQ(F::layer_norm(x, {16}, w, b).dtype(), DType::FLOAT32);
  }
  const DType want =
      kernels::dnnl_supports(DType::BFLOAT16, "layer_norm") ? DType::BFLOAT16 : DType::FLOAT32;
  Tensor w16 = w.to(DType::BFLOAT16).set_stop_gradient(false);
  Tensor y;
  {
    AutocastGuard guard(bf16(AmpLevel::O2));
    EXPECT_EQ(F::layer_norm(x, {16}, w, b).dtype(), want);
    y = F::layer_norm(x, {16}, w16, Tensor());
  }
  EXPECT_EQ(y.dtype(), want);
  sum(cast(y, DType::FLOAT32)).backward();
  EXPECT_EQ(w16.grad().dtype(), DType::BFLOAT16);
  AutocastOptions o = bf16(AmpLevel::O2);
  o.custom_black_list = {"layer_norm"};
  AutocastGuard guard(o);
  EXPECT_EQ(F::layer_norm(x, {16}, w, b).dtype(), DType::FLOAT32);
}

// batch_norm inference (eval, running statistics) on a bfloat16 input, nothing to record: the
// bfloat16 oneDNN kernel, bfloat16 output within bfloat16's rounding of float32's.
TEST(Autocast, BatchNormInferenceRunsInBFloat16) {
  if (!kernels::dnnl_supports(DType::BFLOAT16, "batch_norm")) GTEST_SKIP() << "no bfloat16 kernels here";
  const Tensor x = uniform({2, 8, 3, 3}, -1, 1).to(DType::BFLOAT16);
  Tensor rm = uniform({8}, -0.5, 0.5), rv = uniform({8}, 0.5, 2);
  const Tensor w = uniform({8}, 0.5, 1.5), b = uniform({8}, -0.5, 0.5);
  const Tensor y = F::batch_norm(x, rm, rv, w, b, /*training=*/false, 0.9, 1e-5);
  ASSERT_EQ(y.dtype(), DType::BFLOAT16);
  const Tensor want = F::batch_norm(x.to(DType::FLOAT32), rm, rv, w, b, false, 0.9, 1e-5);
  const auto got = y.to(DType::FLOAT32).to_vector<float>(), ref = want.to_vector<float>();
  for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], ref[i], 2e-2 * (1 + std::fabs(ref[i]))) << i;
  AutocastGuard guard(bf16(AmpLevel::O2));
  EXPECT_EQ(F::batch_norm(x, rm, rv, w.to(DType::BFLOAT16), Tensor(), false, 0.9, 1e-5).dtype(), DType::BFLOAT16);
}

TEST(Autocast, CustomListsMoveOps) {
  AutocastOptions o = bf16();
  o.custom_black_list = {"conv2d"};
  o.custom_white_list = {"softmax"};
  AutocastGuard guard(o);
  EXPECT_EQ(F::conv2d(uniform({1, 1, 4, 4}, -1, 1), uniform({1, 1, 3, 3}, -1, 1), Tensor()).dtype(),
            DType::FLOAT32);
  EXPECT_EQ(F::softmax(uniform({2, 3}, -1, 1)).dtype(), DType::BFLOAT16);
}

TEST(Autocast, AnOpInBothCustomListsIsAValueError) {
  AutocastOptions o = bf16();
  o.custom_black_list = {"linear"};
  o.custom_white_list = {"linear"};
  EXPECT_THROW(AutocastGuard guard(o), ValueError);
  o.custom_black_list.clear();
  o.dtype = DType::FLOAT32;
  EXPECT_THROW(AutocastGuard guard(o), ValueError);
}

TEST(Autocast, O2RunsGrayOpsInTheLowDtype) {
  AutocastGuard guard(bf16(AmpLevel::O2));
  EXPECT_EQ(add(uniform({2, 2}, -1, 1), uniform({2, 2}, -1, 1)).dtype(), DType::BFLOAT16);
}

// Attention is on neither list: O1 keeps its operands' dtype (float32 where they mix), as
// PyTorch's autocast runs attention in the input dtype; O2 runs it in the low dtype, so the
// bfloat16 qkv of an O2 Linear stays bfloat16, and so does its gradient.
TEST(Autocast, AttentionKeepsTheOperandsDtypeAtO1AndRunsLowAtO2) {
  constexpr DType kBf16 = DType::BFLOAT16;
  const Tensor x = uniform({2, 5, 8}, -1, 1);
  const Tensor q32 = uniform({2, 5, 2, 4}, -1, 1), q16 = q32.to(kBf16);
  {
    AutocastGuard guard(bf16(AmpLevel::O2));
    Tensor qkv = F::linear(x, param({8, 3 * 8}), Tensor());
    ASSERT_EQ(qkv.dtype(), kBf16);
    EXPECT_EQ(F::packed_qkv_attention(qkv, 2, true).dtype(), kBf16);
    EXPECT_EQ(F::scaled_dot_product_attention(q32, q32, q32).dtype(), kBf16);  // float32 operands cast
  }
  Tensor leaf = uniform({2, 5, 3 * 8}, -1, 1).to(kBf16).set_stop_gradient(false);
  Tensor y;
  {
    AutocastGuard guard(bf16(AmpLevel::O2));
    y = F::packed_qkv_attention(leaf, 2, true);
  }
  ASSERT_EQ(y.dtype(), kBf16);
  y.backward(Tensor::ones(y.shape(), kBf16));
  ASSERT_TRUE(leaf.grad().defined());
  EXPECT_EQ(leaf.grad().dtype(), kBf16);

  AutocastGuard guard(bf16(AmpLevel::O1));
  EXPECT_EQ(F::scaled_dot_product_attention(q16, q16, q16, true).dtype(), kBf16);
  EXPECT_EQ(F::packed_qkv_attention(leaf, 2).dtype(), kBf16);
  EXPECT_EQ(F::scaled_dot_product_attention(q32, q32, q32).dtype(), DType::FLOAT32);
  EXPECT_EQ(F::scaled_dot_product_attention(q32, q16, q16).dtype(), DType::FLOAT32);
}

TEST(Autocast, GuardsNestRestoreAndArePerThread) {
  EXPECT_FALSE(amp::autocast_enabled());
  {
    AutocastGuard outer(bf16());
    {
      AutocastOptions off = amp::autocast_off();
      AutocastGuard inner(off);
      EXPECT_FALSE(amp::autocast_enabled());
      EXPECT_EQ(F::linear(uniform({2, 3}, -1, 1), uniform({3, 2}, -1, 1), Tensor()).dtype(), DType::FLOAT32);
    }
    EXPECT_TRUE(amp::autocast_enabled());
    EXPECT_EQ(amp::autocast_state().dtype, DType::BFLOAT16);
    bool other_thread_enabled = true;
    std::thread([&] { other_thread_enabled = amp::autocast_enabled(); }).join();
    EXPECT_FALSE(other_thread_enabled);
  }
  EXPECT_FALSE(amp::autocast_enabled());
}

TEST(Autocast, Float16ComputesLinearInFloat16) {
  AutocastOptions o;
  o.dtype = DType::FLOAT16;
  AutocastGuard guard(o);
  EXPECT_EQ(F::linear(uniform({2, 3}, -1, 1), uniform({3, 2}, -1, 1), Tensor()).dtype(), DType::FLOAT16);
}

}  // namespace
}  // namespace crew
