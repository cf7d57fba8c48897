// scaled_dot_product_attention and packed_qkv_attention on bfloat16 and float16 operands:
// outputs, the saved P and every gradient keep the operands' dtype and match the float32
// kernel on the same values within the format's tolerance; plain and packed, causal and not,
// T_q != T_k, and causal T past one block of query rows (the skipped products). The ctest
// entry nn.attention_low_precision_avx2 runs them with ONEDNN_MAX_CPU_ISA=AVX2 (no bfloat16
// kernels: the float32 fallback).
#include <gtest/gtest.h>

#include <string>

#include "crew/autograd/ops.h"
#include "crew/nn/functional.h"
#include "crew/tensor/kernels/attention.h"
#include "crew/tensor/random.h"
#include "tests/testing/low_precision.h"

namespace crew {

// Failure messages show "bfloat16", not the enum's byte (defined in
// functional_low_precision_test.cpp).
void PrintTo(DType dtype, std::ostream* os);

namespace {

namespace F = nn::functional;

// got (of `dtype`) against the float32 want, within the format's tolerance.
void expect_close(const Tensor& got, const Tensor& want, DType dtype, const std::string& what) {
  testing::expect_close_to_float32(got, want, dtype, dtype == DType::BFLOAT16 ? 2e-2 : 4e-3, what);
}

using testing::low_precision_leaves;

class AttentionLowPrecision : public ::testing::TestWithParam<DType> {};

// y = attention(q, k, v) on 16-bit leaves and on their float32 twins, backward from dO = proj.
void check_plain(DType dt, int64_t tq, int64_t tk, bool causal, uint64_t seed) {
  const std::string what = str_cat("T_q ", tq, " T_k ", tk, causal ? " causal " : " ");
  Generator gen(seed);
  auto [q, q32] = low_precision_leaves({2, tq, 2, 8}, dt, &gen);
  auto [k, k32] = low_precision_leaves({2, tk, 2, 8}, dt, &gen);
  auto [v, v32] = low_precision_leaves({2, tk, 2, 8}, dt, &gen);
  const Tensor proj = uniform({2, tq, 2, 8}, -1, 1, DType::FLOAT32, &gen).to(dt);
  const Tensor y = F::scaled_dot_product_attention(q, k, v, causal);
  const Tensor y32 = F::scaled_dot_product_attention(q32, k32, v32, causal);
  expect_close(y, y32, dt, what + "output");
  y.backward(proj);
  y32.backward(proj.to(DType::FLOAT32));
  expect_close(q.grad(), q32.grad(), dt, what + "dQ");
  expect_close(k.grad(), k32.grad(), dt, what + "dK");
  expect_close(v.grad(), v32.grad(), dt, what + "dV");
}

TEST_P(AttentionLowPrecision, PlainMatchesFloat32) {
  check_plain(GetParam(), 5, 7, false, 1);  // T_q != T_k
  check_plain(GetParam(), 6, 6, false, 2);
  check_plain(GetParam(), 6, 6, true, 3);
  check_plain(GetParam(), 150, 150, true, 4);  // causal blocks of 64 query rows, a short last one
}

TEST_P(AttentionLowPrecision, PackedMatchesFloat32) {
  const DType dt = GetParam();
  const int64_t b = 2, h = 2, d = 8;
  for (auto [t, causal] : {std::pair<int64_t, bool>{5, false}, {7, true}, {150, true}}) {
    const std::string what = str_cat("T ", t, causal ? " causal " : " ");
    Generator gen(10 + t);
    auto [qkv, qkv32] = low_precision_leaves({b, t, 3 * h * d}, dt, &gen);
    const Tensor proj = uniform({b, t, h * d}, -1, 1, DType::FLOAT32, &gen).to(dt);
    const Tensor y = F::packed_qkv_attention(qkv, h, causal);
    const Tensor y32 = F::packed_qkv_attention(qkv32, h, causal);
    expect_close(y, y32, dt, what + "output");
    y.backward(proj);
    y32.backward(proj.to(DType::FLOAT32));
    expect_close(qkv.grad(), qkv32.grad(), dt, what + "dqkv");
  }
}

// The kernel keeps P for the backward in the operands' dtype (half of float32's bytes), with
// rows that still sum to 1 within the format's rounding.
TEST_P(AttentionLowPrecision, SavesProbabilitiesInTheOperandsDtype) {
  const DType dt = GetParam();
  Generator gen(5);
  const Tensor qkv = uniform({1, 70, 3 * 2 * 4}, -1, 1, DType::FLOAT32, &gen).to(dt);
  auto [y, p] = kernels::attention_forward(qkv, qkv, qkv, 2, 0.5, true);
  EXPECT_EQ(y.dtype(), dt);
  ASSERT_EQ(p.dtype(), dt);
  ASSERT_EQ(p.shape(), (Shape{1, 2, 70, 70}));
  const auto pv = p.to_vector<double>();
  for (int64_t r = 0; r < 2 * 70; ++r) {
    double row = 0;
    for (int64_t c = 0; c < 70; ++c) row += pv[r * 70 + c];
    EXPECT_NEAR(row, 1.0, dt == DType::BFLOAT16 ? 2e-2 : 2e-3) << "row " << r;
    const int64_t i = r % 70;
    if (i + 1 < 70) EXPECT_EQ(pv[r * 70 + i + 1], 0.0) << "row " << r << " sees a later key";
  }
}

// 16-bit operands pass the dtype check; mixing them with float32 does not.
TEST_P(AttentionLowPrecision, MixedDtypesAreAValueError) {
  const Tensor q = Tensor::zeros({1, 2, 1, 4}, GetParam());
  try {
    F::scaled_dot_product_attention(q, q, q.to(DType::FLOAT32));
    FAIL() << "no error for mixed dtypes";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("dtypes differ"), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, AttentionLowPrecision, ::testing::Values(DType::BFLOAT16, DType::FLOAT16),
                         [](const ::testing::TestParamInfo<DType>& info) {
                           return std::string(dtype_name(info.param));
                         });

}  // namespace
}  // namespace crew
