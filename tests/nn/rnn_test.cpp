// The C++ recurrent layers (crew/nn/rnn.h): Paddle's parameter names and shapes, output and
// state shapes, equality with the stacked functional layers they are made of (the kernel
// itself is checked against a reference in functional_rnn_test.cpp), gradients reaching
// every parameter, argument errors.
#include "crew/nn/rnn.h"

#include <gtest/gtest.h>

#include "crew/autograd/ops.h"
#include "crew/tensor/random.h"

namespace crew {
namespace {

std::vector<std::string> names(const nn::Layer& l) {
  std::vector<std::string> out;
  for (const auto& [n, t] : l.named_parameters()) out.push_back(n);
  return out;
}

TEST(RnnLayerTest, PaddleNamesAndShapes) {
  nn::LSTM lstm(3, 4, {.num_layers = 2, .bidirectional = true});
  std::vector<std::string> want;
  for (const char* l : {"_l0", "_l1"}) {
    for (const char* d : {"", "_reverse"}) {
      for (const char* p : {"weight_ih", "weight_hh", "bias_ih", "bias_hh"}) want.push_back(str_cat(p, l, d));
    }
  }
  EXPECT_EQ(names(lstm), want);
  EXPECT_EQ(lstm.parameter("weight_ih_l0").shape(), (Shape{16, 3}));
  EXPECT_EQ(lstm.parameter("weight_ih_l1_reverse").shape(), (Shape{16, 8}));
  EXPECT_EQ(lstm.parameter("weight_hh_l1").shape(), (Shape{16, 4}));
  EXPECT_EQ(nn::GRU(3, 5).parameter("bias_hh_l0").shape(), (Shape{15}));
  EXPECT_EQ(names(nn::SimpleRNN(3, 5, {.bias = false})),
            (std::vector<std::string>{"weight_ih_l0", "weight_hh_l0"}));
  // U(-1/sqrt(H), 1/sqrt(H)).
  const auto w = nn::LSTM(8, 16).parameter("weight_hh_l0").to_vector<float>();
  for (float v : w) ASSERT_LE(std::abs(v), 0.25f);
}

TEST(RnnLayerTest, OutputsAndStates) {
  Generator gen(3);
  Tensor x = uniform({2, 5, 3}, -1, 1, DType::FLOAT32, &gen);
  nn::LSTM lstm(3, 4, {.num_layers = 2, .bidirectional = true});
  auto o = lstm.run(x);
  EXPECT_EQ(o.y.shape(), (Shape{2, 5, 8}));
  EXPECT_EQ(o.h_n.shape(), (Shape{4, 2, 4}));
  EXPECT_EQ(o.c_n.shape(), (Shape{4, 2, 4}));
  nn::GRU gru(3, 4, {.time_major = true});
  auto g = gru.run(crew::transpose(x, 0, 1));
  EXPECT_EQ(g.y.shape(), (Shape{5, 2, 4}));
  EXPECT_FALSE(g.c_n.defined());
  EXPECT_EQ(nn::SimpleRNN(3, 6, {}, "relu")(x).shape(), (Shape{2, 5, 6}));
}

TEST(RnnLayerTest, IsTheStackOfFunctionalLayers) {
  Generator gen(4);
  Tensor x = uniform({2, 5, 3}, -1, 1, DType::FLOAT32, &gen);
  Tensor h0 = uniform({4, 2, 4}, -1, 1, DType::FLOAT32, &gen),
         c0 = uniform({4, 2, 4}, -1, 1, DType::FLOAT32, &gen);
  nn::LSTM lstm(3, 4, {.num_layers = 2, .bidirectional = true});
  auto o = lstm.run(x, h0, c0);
  auto p = lstm.parameters();
  Tensor xt = crew::transpose(x, 0, 1);
  auto l0 = nn::functional::rnn_layer(xt, {p.begin(), p.begin() + 8}, h0.slice(0, 2), c0.slice(0, 2),
                                      kernels::RnnCell::LSTM, true);
  auto l1 = nn::functional::rnn_layer(l0.y, {p.begin() + 8, p.end()}, h0.slice(2, 4), c0.slice(2, 4),
                                      kernels::RnnCell::LSTM, true);
  const auto a = o.y.to_vector<float>(), b = crew::transpose(l1.y, 0, 1).to_vector<float>();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) ASSERT_NEAR(a[i], b[i], 1e-6) << i;
  EXPECT_EQ(o.c_n.slice(2, 4).to_vector<float>(), l1.c_n.to_vector<float>());
}

TEST(RnnLayerTest, GradientsReachEveryParameter) {
  Generator gen(5);
  Tensor x = uniform({2, 3, 3}, -1, 1, DType::FLOAT32, &gen);
  nn::GRU gru(3, 4, {.num_layers = 2, .bidirectional = true, .dropout = 0.2});
  auto o = gru.run(x);
  crew::add(crew::sum(o.y), crew::sum(o.h_n)).backward();
  for (const auto& [name, t] : gru.named_parameters()) {
    ASSERT_TRUE(t.grad().defined()) << name;
    double s = 0;
    for (float v : t.grad().to_vector<float>()) s += std::abs(v);
    EXPECT_GT(s, 0) << name;
  }
}

TEST(RnnLayerTest, BadArgumentsAreValueErrors) {
  EXPECT_THROW(nn::SimpleRNN(3, 4, {}, "sigmoid"), ValueError);
  EXPECT_THROW(nn::LSTM(3, 0), ValueError);
  EXPECT_THROW(nn::LSTM(3, 4, {.num_layers = 0}), ValueError);
  nn::LSTM lstm(3, 4);
  EXPECT_THROW(lstm(Tensor::ones({2, 5, 6})), ValueError);
  EXPECT_THROW(lstm.run(Tensor::ones({2, 5, 3}), Tensor::ones({2, 2, 4})), ValueError);
}

}  // namespace
}  // namespace crew
