// matmul over broadcast batch axes: values against a loop reference (float32 on oneDNN,
// float64 on BLAS) and finite-difference gradients of broadcast inputs.
#include <gtest/gtest.h>

#include "crew/autograd/ops.h"
#include "tests/testing/gradcheck.h"

namespace crew {
namespace {

using testing::expect_gradients_match;
using testing::random_input;
using Inputs = std::vector<Tensor>;

struct MatmulCase {
  Shape a, b;
  bool ta, tb;
};

// Element (i, j) of op(x) for the matrix at element offset `base`.
double at(const std::vector<double>& v, int64_t base, int64_t cols, bool trans, int64_t i, int64_t j) {
  return trans ? v[base + j * cols + i] : v[base + i * cols + j];
}

// Offset of output batch `i` in an input of batch shape `in` (right-aligned, 1 broadcasts):
// unravel i over `out` into coordinates, clamp broadcast axes to 0, ravel them over `in`.
int64_t offset_of(int64_t i, const Shape& out, Shape in, int64_t mat) {
  in.insert(in.begin(), out.size() - in.size(), 1);
  std::vector<int64_t> coord(out.size());
  for (size_t d = out.size(); d-- > 0; i /= out[d]) coord[d] = i % out[d];
  int64_t flat = 0;
  for (size_t d = 0; d < out.size(); ++d) flat = flat * in[d] + (in[d] == 1 ? 0 : coord[d]);
  return flat * mat;
}

std::vector<double> reference(const Tensor& a, const Tensor& b, bool ta, bool tb, const Shape& out) {
  const auto av = a.to_vector<double>(), bv = b.to_vector<double>();
  const int64_t ar = a.size(-2), ac = a.size(-1), br = b.size(-2), bc = b.size(-1);
  const int64_t m = ta ? ac : ar, k = ta ? ar : ac, n = tb ? br : bc;
  const Shape batch(out.begin(), out.end() - 2);
  const Shape abatch(a.shape().begin(), a.shape().end() - 2), bbatch(b.shape().begin(), b.shape().end() - 2);
  std::vector<double> c;
  for (int64_t i = 0; i < shape_numel(batch); ++i) {
    const int64_t ao = offset_of(i, batch, abatch, ar * ac), bo = offset_of(i, batch, bbatch, br * bc);
    for (int64_t r = 0; r < m; ++r) {
      for (int64_t col = 0; col < n; ++col) {
        double s = 0;
        for (int64_t p = 0; p < k; ++p) s += at(av, ao, ac, ta, r, p) * at(bv, bo, bc, tb, p, col);
        c.push_back(s);
      }
    }
  }
  return c;
}

const MatmulCase kCases[] = {
    {{2, 3, 4, 5}, {2, 3, 5, 4}, false, false},  // [B, H, T, D] x [B, H, D, T]
    {{2, 3, 4, 5}, {2, 3, 4, 5}, false, true},   // Q K^T
    {{2, 4, 3}, {3, 6}, false, false},           // Linear: [B, T, K] x [K, N]
    {{2, 4, 3}, {6, 3}, false, true},            // tied logits: x W^T
    {{2, 4, 3}, {2, 3, 6}, false, false},        // [B, T, K] x [B, K, N]
    {{2, 1, 4, 3}, {3, 3, 6}, false, false},     // both sides broadcast
    {{3, 4}, {2, 2, 3, 5}, true, false},         // 2-d a against a 4-d b
    {{2, 3, 4}, {3, 5}, true, false},            // transposed a with a 2-d b (no fold)
    {{1, 3, 4}, {2, 5, 3}, true, true},
};

TEST(MatmulBroadcastTest, MatchesLoopReference) {
  Generator gen(3);
  for (DType dt : {DType::FLOAT32, DType::FLOAT64}) {
    for (const MatmulCase& c : kCases) {
      Tensor a = uniform(c.a, -1, 1, dt, &gen), b = uniform(c.b, -1, 1, dt, &gen);
      Tensor y = matmul(a, b, c.ta, c.tb);
      const std::vector<double> want = reference(a, b, c.ta, c.tb, y.shape());
      const std::vector<double> got = y.to_vector<double>();
      ASSERT_EQ(got.size(), want.size()) << shape_str(c.a) << " x " << shape_str(c.b);
      for (size_t i = 0; i < got.size(); ++i) {
        ASSERT_NEAR(got[i], want[i], 1e-5) << shape_str(c.a) << " x " << shape_str(c.b) << " at " << i;
      }
    }
  }
}

TEST(MatmulBroadcastTest, OutputShapes) {
  EXPECT_EQ(matmul(Tensor::zeros({2, 3, 4, 5}), Tensor::zeros({2, 3, 5, 7})).shape(), (Shape{2, 3, 4, 7}));
  EXPECT_EQ(matmul(Tensor::zeros({2, 4, 3}), Tensor::zeros({6, 3}), false, true).shape(), (Shape{2, 4, 6}));
  EXPECT_EQ(matmul(Tensor::zeros({5, 1, 4, 3}), Tensor::zeros({2, 3, 6})).shape(), (Shape{5, 2, 4, 6}));
}

TEST(MatmulBroadcastTest, GradientsSumOverBroadcastBatch) {
  for (const MatmulCase& c : kCases) {
    Tensor a = random_input(c.a, DType::FLOAT64, 11), b = random_input(c.b, DType::FLOAT64, 12);
    expect_gradients_match([&c](const Inputs& in) { return matmul(in[0], in[1], c.ta, c.tb); }, {a, b});
  }
}

TEST(MatmulBroadcastTest, Float32GradientsOnOneDnn) {
  Tensor a = random_input({2, 2, 3, 4}, DType::FLOAT32, 13),
         b = random_input({2, 1, 3, 4}, DType::FLOAT32, 14);
  expect_gradients_match([](const Inputs& in) { return matmul(in[0], in[1], false, true); }, {a, b},
                         testing::float32_options());
}

TEST(MatmulBroadcastTest, RejectsBadShapes) {
  EXPECT_THROW(matmul(Tensor::zeros({2, 3, 4}), Tensor::zeros({3, 5, 2})), ValueError);  // batch 2 vs 3
  EXPECT_THROW(matmul(Tensor::zeros({2, 3, 4}), Tensor::zeros({5, 2})), ValueError);     // inner 4 vs 5
  EXPECT_THROW(matmul(Tensor::zeros({4}), Tensor::zeros({4, 2})), ValueError);           // 1-d
  try {
    matmul(Tensor::zeros({2, 3, 4}), Tensor::zeros({3, 4, 2}));
    FAIL() << "no error";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("[2, 3, 4]"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace crew
