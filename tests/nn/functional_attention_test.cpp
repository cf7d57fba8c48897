// scaled_dot_product_attention (and its packed form) against a reference built from crew's matmul, permute
// and softmax ops; finite-difference gradients; shape errors.
#include <cmath>

#include "tests/nn/functional_test_util.h"

namespace crew {
namespace {

using namespace nn::functional_testing;

// softmax(scale Q K^T + mask) V with the ops of crew/autograd (differentiable end to end).
Tensor reference(const Tensor& q, const Tensor& k, const Tensor& v, bool causal, double scale) {
  const int64_t tq = q.size(1), tk = k.size(1);
  Tensor qh = permute(q, {0, 2, 1, 3}), kh = permute(k, {0, 2, 1, 3}), vh = permute(v, {0, 2, 1, 3});
  Tensor s = mul(matmul(qh, kh, false, true), scale);
  if (causal) {
    std::vector<double> mask(tq * tk, 0.0);
    for (int64_t i = 0; i < tq; ++i)
      for (int64_t j = i + 1; j < tk; ++j) mask[i * tk + j] = -1e9;
    s = add(s, Tensor::from_vector(mask, {tq, tk}).to(q.dtype()));
  }
  return permute(matmul(F::softmax(s, -1), vh), {0, 2, 1, 3});
}

void expect_close(const Tensor& got, const Tensor& want, double tol) {
  ASSERT_EQ(got.shape(), want.shape());
  const auto g = got.to_vector<double>(), w = want.to_vector<double>();
  for (size_t i = 0; i < g.size(); ++i) ASSERT_NEAR(g[i], w[i], tol) << i;
}

TEST(FunctionalAttentionTest, MatchesReference) {
  for (DType dt : {DType::FLOAT64, DType::FLOAT32}) {
    for (bool causal : {false, true}) {
      Tensor q = random_input({2, 5, 3, 4}, dt, 1), k = random_input({2, 5, 3, 4}, dt, 2);
      Tensor v = random_input({2, 5, 3, 4}, dt, 3);
      const double tol = dt == DType::FLOAT32 ? 1e-5 : 1e-12;
      expect_close(F::scaled_dot_product_attention(q, k, v, causal), reference(q, k, v, causal, 0.5), tol);
      expect_close(F::scaled_dot_product_attention(q, k, v, causal, 0.3), reference(q, k, v, causal, 0.3),
                   tol);
    }
  }
}

TEST(FunctionalAttentionTest, CausalFirstQueryCopiesFirstValue) {
  Tensor q = random_input({1, 4, 2, 3}, DType::FLOAT32, 4), k = random_input({1, 4, 2, 3}, DType::FLOAT32, 5);
  Tensor v = random_input({1, 4, 2, 3}, DType::FLOAT32, 6);
  const auto y = F::scaled_dot_product_attention(q, k, v, true).to_vector<float>();
  const auto vv = v.to_vector<float>();
  for (int64_t i = 0; i < 6; ++i) EXPECT_FLOAT_EQ(y[i], vv[i]);  // query 0 sees only key 0 (all heads)
}

TEST(FunctionalAttentionTest, GradientsMatchFiniteDifferences) {
  Tensor q = random_input({2, 3, 2, 4}, DType::FLOAT64, 7), k = random_input({2, 3, 2, 4}, DType::FLOAT64, 8);
  Tensor v = random_input({2, 3, 2, 4}, DType::FLOAT64, 9);
  for (bool causal : {false, true}) {
    expect_gradients_match(
        [causal](const Inputs& in) { return F::scaled_dot_product_attention(in[0], in[1], in[2], causal); },
        {q, k, v});
  }
  // Different key length (non-causal).
  expect_gradients_match(
      [](const Inputs& in) { return F::scaled_dot_product_attention(in[0], in[1], in[2]); },
      {q, random_input({2, 5, 2, 4}, DType::FLOAT64, 10), random_input({2, 5, 2, 4}, DType::FLOAT64, 11)});
}

TEST(FunctionalAttentionTest, Float32GradientsMatchReference) {
  for (bool causal : {false, true}) {
    Tensor q = random_input({2, 6, 2, 8}, DType::FLOAT32, 12),
           k = random_input({2, 6, 2, 8}, DType::FLOAT32, 13);
    Tensor v = random_input({2, 6, 2, 8}, DType::FLOAT32, 14);
    Tensor proj = random_input({2, 6, 2, 8}, DType::FLOAT32, 15).detach();
    sum(mul(F::scaled_dot_product_attention(q, k, v, causal), proj)).backward();
    const Tensor gq = q.grad(), gk = k.grad(), gv = v.grad();
    for (Tensor* t : {&q, &k, &v}) t->clear_grad();
    sum(mul(reference(q, k, v, causal, 1 / std::sqrt(8.0)), proj)).backward();
    expect_close(gq, q.grad(), 1e-5);
    expect_close(gk, k.grad(), 1e-5);
    expect_close(gv, v.grad(), 1e-5);
  }
}

// Causal attention longer than one block of query rows (64): the products with masked keys are
// skipped block by block; T = 150 leaves a short last block. Outputs and all three gradients
// against the reference, for separate inputs and the packed form.
TEST(FunctionalAttentionTest, LongCausalAttentionMatchesReference) {
  const int64_t b = 2, t = 150, h = 2, d = 8;
  Tensor q = random_input({b, t, h, d}, DType::FLOAT32, 31), k = random_input({b, t, h, d}, DType::FLOAT32, 32);
  Tensor v = random_input({b, t, h, d}, DType::FLOAT32, 33);
  Tensor proj = random_input({b, t, h, d}, DType::FLOAT32, 34).detach();
  Tensor y = F::scaled_dot_product_attention(q, k, v, true);
  sum(mul(y, proj)).backward();
  const Tensor got_y = y.detach(), gq = q.grad(), gk = k.grad(), gv = v.grad();
  for (Tensor* x : {&q, &k, &v}) x->clear_grad();
  Tensor want = reference(q, k, v, true, 1 / std::sqrt(8.0));
  sum(mul(want, proj)).backward();
  expect_close(got_y, want, 1e-5);
  expect_close(gq, q.grad(), 1e-5);
  expect_close(gk, k.grad(), 1e-5);
  expect_close(gv, v.grad(), 1e-5);

  Tensor qkv = concat({reshape(q.detach(), {b, t, h * d}), reshape(k.detach(), {b, t, h * d}),
                       reshape(v.detach(), {b, t, h * d})},
                      -1);
  qkv.set_stop_gradient(false);
  Tensor yp = F::packed_qkv_attention(qkv, h, true);
  sum(mul(yp, reshape(proj, {b, t, h * d}))).backward();
  expect_close(yp, reshape(want, {b, t, h * d}), 1e-5);
  const Tensor want_g = concat({reshape(q.grad(), {b, t, h * d}), reshape(k.grad(), {b, t, h * d}),
                                reshape(v.grad(), {b, t, h * d})},
                               -1);
  expect_close(qkv.grad(), want_g, 1e-5);
}

// packed_qkv_attention against split + scaled_dot_product_attention: outputs and the gradient
// of qkv (float32 on the strided path, float64 through the composition).
TEST(FunctionalAttentionTest, PackedQkvMatchesSeparateInputs) {
  const int64_t b = 2, t = 5, h = 3, d = 4, c = h * d;
  for (DType dt : {DType::FLOAT32, DType::FLOAT64}) {
    for (bool causal : {false, true}) {
      Tensor qkv = random_input({b, t, 3 * c}, dt, 21);
      Tensor proj = random_input({b, t, c}, dt, 22).detach();
      Tensor y = F::packed_qkv_attention(qkv, h, causal, 0.4);
      sum(mul(y, proj)).backward();
      const Tensor got_y = y.detach(), got_g = qkv.grad();
      qkv.clear_grad();
      std::vector<Tensor> parts = split(qkv, 3, -1);
      const Shape hs = {b, t, h, d};
      Tensor want = reshape(F::scaled_dot_product_attention(reshape(parts[0], hs), reshape(parts[1], hs),
                                                            reshape(parts[2], hs), causal, 0.4),
                            {b, t, c});
      sum(mul(want, proj)).backward();
      const double tol = dt == DType::FLOAT32 ? 1e-5 : 1e-12;
      expect_close(got_y, want, tol);
      expect_close(got_g, qkv.grad(), tol);
    }
  }
}

TEST(FunctionalAttentionTest, PackedQkvGradientsMatchFiniteDifferences) {
  for (bool causal : {false, true}) {
    expect_gradients_match([causal](const Inputs& in) { return F::packed_qkv_attention(in[0], 2, causal); },
                           {random_input({2, 3, 3 * 2 * 4}, DType::FLOAT64, 23)});
  }
}

TEST(FunctionalAttentionTest, PackedQkvRejectsBadShapes) {
  EXPECT_THROW(F::packed_qkv_attention(Tensor::zeros({2, 3, 12}), 0), ValueError);
  EXPECT_THROW(F::packed_qkv_attention(Tensor::zeros({2, 3, 12}), 3),
               ValueError);  // 12 is no multiple of 3 * 3
  EXPECT_THROW(F::packed_qkv_attention(Tensor::zeros({3, 24}), 2), ValueError);
  try {
    F::packed_qkv_attention(Tensor::zeros({2, 3, 10}), 2);
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("[2, 3, 10]"), std::string::npos) << e.what();
  }
}

TEST(FunctionalAttentionTest, RejectsBadShapes) {
  Tensor q = Tensor::zeros({2, 3, 2, 4});
  EXPECT_THROW(F::scaled_dot_product_attention(Tensor::zeros({3, 2, 4}), q, q), ValueError);
  EXPECT_THROW(F::scaled_dot_product_attention(q, Tensor::zeros({2, 3, 2, 5}), Tensor::zeros({2, 3, 2, 5})),
               ValueError);
  EXPECT_THROW(F::scaled_dot_product_attention(q, q, Tensor::zeros({2, 4, 2, 4})), ValueError);
  EXPECT_THROW(F::scaled_dot_product_attention(q, q, Tensor::zeros({2, 3, 2, 4}, DType::FLOAT64)),
               ValueError);
  try {
    F::scaled_dot_product_attention(q, q, Tensor::zeros({2, 4, 2, 4}));
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("[2, 4, 2, 4]"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace crew
