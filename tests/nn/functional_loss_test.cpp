// cross_entropy, mse_loss, accuracy, batch_norm.
#include <cmath>

#include "tests/nn/functional_test_util.h"

namespace crew {
namespace {

using namespace nn::functional_testing;

TEST(FunctionalLossTest, CrossEntropyGradientsAllReductions) {
  Tensor logits = random_input({4, 5});
  Tensor labels = Tensor::from_vector<int64_t>({0, 4, 2, 2}, {4});
  Tensor labels_col = Tensor::from_vector<int64_t>({0, 4, 2, 2}, {4, 1});
  for (auto r : {F::Reduction::MEAN, F::Reduction::SUM, F::Reduction::NONE}) {
    expect_gradients_match([&](const Inputs& in) { return F::cross_entropy(in[0], labels, r); }, {logits});
    expect_gradients_match([&](const Inputs& in) { return F::cross_entropy(in[0], labels_col, r); },
                           {logits});
  }
}

TEST(FunctionalLossTest, CrossEntropyValuesAreStable) {
  Tensor logits = Tensor::from_vector<float>({1000, 0, 0, 0, 0, 0}, {2, 3});
  Tensor labels = Tensor::from_vector<int64_t>({0, 1}, {2, 1});
  const auto none = F::cross_entropy(logits, labels, F::Reduction::NONE).to_vector<double>();
  ASSERT_EQ(none.size(), 2u);
  EXPECT_NEAR(none[0], 0.0, 1e-6);
  EXPECT_NEAR(none[1], std::log(3.0), 1e-6);
  EXPECT_NEAR(F::cross_entropy(logits, labels).item(), std::log(3.0) / 2, 1e-6);
  EXPECT_NEAR(F::cross_entropy(logits, labels, F::Reduction::SUM).item(), std::log(3.0), 1e-6);
}

TEST(FunctionalLossTest, CrossEntropyRejectsBadLabels) {
  Tensor logits = Tensor::zeros({2, 3});
  EXPECT_THROW(F::cross_entropy(logits, Tensor::from_vector<int64_t>({0, 3}, {2})), IndexError);
  EXPECT_THROW(F::cross_entropy(logits, Tensor::from_vector<int64_t>({0, 1, 2}, {3})), ValueError);
  EXPECT_THROW(F::cross_entropy(logits, Tensor::from_vector<float>({0, 1}, {2})), ValueError);
  try {
    F::cross_entropy(logits, Tensor::from_vector<int64_t>({0, 7}, {2}));
  } catch (const IndexError& e) {
    EXPECT_NE(std::string(e.what()).find("label 7 at row 1"), std::string::npos) << e.what();
  }
}

TEST(FunctionalLossTest, MseLoss) {
  Tensor a = random_input({3, 4});
  Tensor b = random_input({3, 4}, DType::FLOAT64, 9);
  for (auto r : {F::Reduction::MEAN, F::Reduction::SUM, F::Reduction::NONE}) {
    expect_gradients_match([r](const Inputs& in) { return F::mse_loss(in[0], in[1], r); }, {a, b});
  }
  Tensor x = Tensor::from_vector<float>({1, 2}, {2});
  Tensor y = Tensor::from_vector<float>({3, 2}, {2});
  EXPECT_FLOAT_EQ(F::mse_loss(x, y).item(), 2.0f);
}

TEST(FunctionalLossTest, AccuracyTopK) {
  Tensor logits = Tensor::from_vector<float>({0.1f, 0.7f, 0.2f, 0.5f, 0.3f, 0.2f, 0.2f, 0.3f, 0.5f}, {3, 3});
  Tensor labels = Tensor::from_vector<int64_t>({1, 1, 1}, {3, 1});
  EXPECT_FLOAT_EQ(F::accuracy(logits, labels).item(), 1.0f / 3);
  EXPECT_FLOAT_EQ(F::accuracy(logits, labels, 2).item(), 1.0f);
  EXPECT_TRUE(F::accuracy(logits, labels).stop_gradient());
  EXPECT_THROW(F::accuracy(logits, labels, 4), ValueError);
}

TEST(FunctionalNormTest, BatchNormTrainingGradientsAndRunningStats) {
  Tensor x = random_input({3, 2, 2, 3});
  Tensor w = random_input({2}, DType::FLOAT64, 3);
  Tensor b = random_input({2}, DType::FLOAT64, 4);
  Tensor rm = Tensor::zeros({2}, DType::FLOAT64), rv = Tensor::ones({2}, DType::FLOAT64);
  expect_gradients_match([&](const Inputs& in) { return F::batch_norm(in[0], rm, rv, in[1], in[2], true); },
                         {x, w, b});
  // One more call from fresh statistics: running = 0.9 * running + 0.1 * batch (biased var).
  rm.fill_(0);
  rv.fill_(1);
  Tensor y = F::batch_norm(x.detach(), rm, rv, Tensor(), Tensor(), true, 0.9, 1e-5);
  const auto xv = x.to_vector<double>();
  double mean0 = 0, var0 = 0;
  std::vector<double> ch0;
  for (int64_t n = 0; n < 3; ++n)
    for (int64_t k = 0; k < 6; ++k) ch0.push_back(xv[(n * 2 + 0) * 6 + k]);
  for (double v : ch0) mean0 += v / ch0.size();
  for (double v : ch0) var0 += (v - mean0) * (v - mean0) / ch0.size();
  EXPECT_NEAR(rm.to_vector<double>()[0], 0.1 * mean0, 1e-12);
  EXPECT_NEAR(rv.to_vector<double>()[0], 0.9 + 0.1 * var0, 1e-12);
  EXPECT_NEAR(y.to_vector<double>()[0], (xv[0] - mean0) / std::sqrt(var0 + 1e-5), 1e-9);
}

// Float32 training runs on oneDNN (a blocked input stays blocked): against the float64 loops.
TEST(FunctionalNormTest, BatchNormFloat32OnOneDnnMatchesTheFloat64Loops) {
  for (bool blocked : {false, true}) {
    Tensor x64 = random_input({4, 16, 5, 5}, DType::FLOAT64, 7).detach();
    Tensor w64 = random_input({16}, DType::FLOAT64, 8).detach();
    Tensor b64 = random_input({16}, DType::FLOAT64, 9).detach();
    Tensor r64 = random_input({4, 16, 5, 5}, DType::FLOAT64, 10).detach();
    auto run = [&](DType dt, Tensor* rm, Tensor* rv) {
      Tensor x = x64.to(dt), w = w64.to(dt).set_stop_gradient(false), b = b64.to(dt).set_stop_gradient(false);
      x.set_stop_gradient(false);
      Tensor in = x;
      if (blocked && dt == DType::FLOAT32) {  // through a 1x1 identity conv: a blocked input
        Tensor eye = Tensor::zeros({16, 16, 1, 1});
        for (int c = 0; c < 16; ++c) eye.data<float>()[c * 16 + c] = 1.0f;
        in = F::conv2d(x, eye, Tensor());
        EXPECT_NE(in.layout(), nullptr);
      }
      *rm = Tensor::zeros({16}, dt), *rv = Tensor::ones({16}, dt);
      Tensor y = F::batch_norm(in, *rm, *rv, w, b, true, 0.9, 1e-5);
      sum(y * r64.to(dt)).backward();
      return std::vector<Tensor>{y, x.grad(), w.grad(), b.grad()};
    };
    Tensor rm32, rv32, rm64, rv64;
    const auto got = run(DType::FLOAT32, &rm32, &rv32);
    const auto want = run(DType::FLOAT64, &rm64, &rv64);
    const char* names[] = {"y", "x grad", "weight grad", "bias grad"};
    for (int i = 0; i < 4; ++i) {
      const auto g = got[i].to_vector<double>(), w = want[i].to_vector<double>();
      ASSERT_EQ(g.size(), w.size());
      for (size_t k = 0; k < g.size(); ++k)
        ASSERT_NEAR(g[k], w[k], 1e-4 * (1 + std::abs(w[k]))) << names[i] << " [" << k << "] blocked " << blocked;
    }
    for (int c = 0; c < 16; ++c) {
      EXPECT_NEAR(rm32.to_vector<double>()[c], rm64.to_vector<double>()[c], 1e-6);
      EXPECT_NEAR(rv32.to_vector<double>()[c], rv64.to_vector<double>()[c], 1e-5);
    }
  }
}

TEST(FunctionalNormTest, BatchNormInferenceUsesRunningStats) {
  Tensor x = random_input({2, 3, 2});
  Tensor w = random_input({3}, DType::FLOAT64, 5);
  Tensor b = random_input({3}, DType::FLOAT64, 6);
  Tensor rm = Tensor::from_vector<double>({0.1, -0.2, 0.3}, {3});
  Tensor rv = Tensor::from_vector<double>({0.5, 1.5, 2.0}, {3});
  expect_gradients_match([&](const Inputs& in) { return F::batch_norm(in[0], rm, rv, in[1], in[2], false); },
                         {x, w, b});
  EXPECT_EQ(rm.to_vector<double>(), (std::vector<double>{0.1, -0.2, 0.3}))
      << "inference must not update stats";
  const double want = (x.to_vector<double>()[0] - 0.1) / std::sqrt(0.5 + 1e-5) * w.to_vector<double>()[0] +
                      b.to_vector<double>()[0];
  EXPECT_NEAR(F::batch_norm(x.detach(), rm, rv, w, b, false).to_vector<double>()[0], want, 1e-12);
  Tensor bad = Tensor::zeros({2}, DType::FLOAT64);
  EXPECT_THROW(F::batch_norm(x, bad, rv, w, b, false), ValueError);
}

}  // namespace
}  // namespace crew
