// rnn_layer (oneDNN's RNN primitives, float32) against a float64 reference composed of crew's
// ops step by step in Paddle's formulation: outputs, final states and every gradient, for
// SimpleRNN (tanh, relu), LSTM and GRU, one and two layers, both directions, with and without
// initial states and biases; a finite-difference gradcheck; shape errors.
#include "crew/nn/functional_rnn.h"

#include <cmath>

#include "tests/nn/functional_test_util.h"

namespace crew {
namespace {

using namespace nn::functional_testing;
using kernels::RnnCell;

constexpr RnnCell kCells[] = {RnnCell::RNN_TANH, RnnCell::RNN_RELU, RnnCell::LSTM, RnnCell::GRU};

Tensor step_rows(const Tensor& x, int64_t t) { return crew::squeeze(crew::slice(x, 0, t, t + 1), 0); }

// One direction of one layer, Paddle's cell math. w = {w_ih, w_hh, b_ih, b_hh} (biases may be
// undefined); h0, c0 [N, H]. Returns y [T, N, H], h_n, c_n [N, H].
std::vector<Tensor> reference_direction(RnnCell cell, const Tensor& x, const std::vector<Tensor>& w, Tensor h,
                                        Tensor c, bool reverse) {
  const int64_t T = x.size(0);
  std::vector<Tensor> ys(T);
  for (int64_t s = 0; s < T; ++s) {
    const int64_t t = reverse ? T - 1 - s : s;
    Tensor gx = crew::matmul(step_rows(x, t), w[0], false, true);
    if (w[2].defined()) gx = crew::add(gx, w[2]);
    Tensor gh = crew::matmul(h, w[1], false, true);
    if (w[3].defined()) gh = crew::add(gh, w[3]);
    switch (cell) {
      case RnnCell::RNN_TANH:
        h = F::tanh(crew::add(gx, gh));
        break;
      case RnnCell::RNN_RELU:
        h = F::relu(crew::add(gx, gh));
        break;
      case RnnCell::LSTM: {
        std::vector<Tensor> g = crew::split(crew::add(gx, gh), 4, 1);
        c = crew::add(crew::mul(F::sigmoid(g[1]), c), crew::mul(F::sigmoid(g[0]), F::tanh(g[2])));
        h = crew::mul(F::sigmoid(g[3]), F::tanh(c));
        break;
      }
      case RnnCell::GRU: {
        std::vector<Tensor> a = crew::split(gx, 3, 1), b = crew::split(gh, 3, 1);
        Tensor r = F::sigmoid(crew::add(a[0], b[0]));
        Tensor z = F::sigmoid(crew::add(a[1], b[1]));
        Tensor cand = F::tanh(crew::add(a[2], crew::mul(r, b[2])));
        h = crew::add(crew::mul(crew::sub(h, cand), z), cand);
        break;
      }
    }
    ys[t] = crew::unsqueeze(h, 0);
  }
  return {crew::concat(ys, 0), h, c};
}

// The reference of rnn_layer: {y, h_n, c_n} with the directions' results concatenated.
std::vector<Tensor> reference_layer(RnnCell cell, const Tensor& x, const std::vector<Tensor>& w,
                                    const Tensor& h0, const Tensor& c0, bool bidirectional, bool reverse) {
  const int64_t D = bidirectional ? 2 : 1;
  std::vector<Tensor> ys, hs, cs;
  for (int64_t d = 0; d < D; ++d) {
    std::vector<Tensor> wd(w.begin() + 4 * d, w.begin() + 4 * d + 4);
    auto r = reference_direction(cell, x, wd, step_rows(h0, d),
                                 cell == RnnCell::LSTM ? step_rows(c0, d) : Tensor(),
                                 bidirectional ? d == 1 : reverse);
    ys.push_back(r[0]);
    hs.push_back(crew::unsqueeze(r[1], 0));
    if (cell == RnnCell::LSTM) cs.push_back(crew::unsqueeze(r[2], 0));
  }
  return {crew::concat(ys, 2), crew::concat(hs, 0), cell == RnnCell::LSTM ? crew::concat(cs, 0) : Tensor()};
}

struct Config {
  RnnCell cell;
  int64_t layers;
  bool bidirectional, reverse, initial_states, biases;
  bool batch_major = false;
};

std::string describe(const Config& c) {
  return str_cat(kernels::rnn_cell_name(c.cell), " layers=", c.layers, " bidirectional=", c.bidirectional,
                 " reverse=", c.reverse, " initial_states=", c.initial_states, " biases=", c.biases,
                 " batch_major=", c.batch_major);
}

void expect_close(const Tensor& got, const Tensor& want, double tol, const std::string& what) {
  ASSERT_TRUE(got.defined() && want.defined()) << what;
  ASSERT_EQ(got.shape(), want.shape()) << what;
  const auto g = got.to_vector<double>(), w = want.to_vector<double>();
  for (size_t i = 0; i < g.size(); ++i) {
    ASSERT_NEAR(g[i], w[i], tol * (1 + std::abs(w[i]))) << what << " element " << i;
  }
}

// Runs the config through rnn_layer (float32) and the reference (float64) on the same
// values, stacking `layers` layers, and compares outputs, final states and gradients of
// sum(y * Ry) + sum(h_n * Rh) + sum(c_n * Rc).
void check_config(const Config& cfg) {
  const std::string what = describe(cfg);
  const int64_t T = 5, N = 3, I = 4, H = 3, D = cfg.bidirectional ? 2 : 1,
                G = kernels::rnn_gate_count(cfg.cell);
  const bool lstm = cfg.cell == RnnCell::LSTM;
  Generator gen(11);
  auto input = [&](const Shape& s, double scale = 0.6) {
    Tensor t = crew::uniform(s, -scale, scale, DType::FLOAT64, &gen);
    t.set_stop_gradient(false);
    return t;
  };
  Tensor x = input({T, N, I}, 1.0);
  std::vector<Tensor> weights;  // per layer and direction: w_ih, w_hh, b_ih, b_hh
  std::vector<Tensor> h0s, c0s;
  for (int64_t l = 0; l < cfg.layers; ++l) {
    const int64_t in = l == 0 ? I : D * H;
    for (int64_t d = 0; d < D; ++d) {
      weights.push_back(input({G * H, in}));
      weights.push_back(input({G * H, H}));
      weights.push_back(cfg.biases ? input({G * H}) : Tensor());
      weights.push_back(cfg.biases ? input({G * H}) : Tensor());
    }
    h0s.push_back(cfg.initial_states ? input({D, N, H}) : Tensor());
    c0s.push_back(cfg.initial_states && lstm ? input({D, N, H}) : Tensor());
  }
  auto f32 = [](const Tensor& t) {
    if (!t.defined()) return Tensor();
    Tensor c = t.detach().to(DType::FLOAT32);
    c.set_stop_gradient(false);
    return c;
  };
  // The kernel's side reads [N, T, ...] when batch-major; the reference is time-major.
  auto bm = [&](const Tensor& t) { return cfg.batch_major ? crew::transpose(t, 0, 1) : t; };
  Tensor x32 = f32(bm(x));
  std::vector<Tensor> w32, h032, c032;
  for (const Tensor& w : weights) w32.push_back(f32(w));
  for (const Tensor& h : h0s) h032.push_back(f32(h));
  for (const Tensor& c : c0s) c032.push_back(f32(c));

  Tensor y_ref = x, y_got = x32;
  Tensor loss_ref = Tensor::scalar(0.0, DType::FLOAT64), loss_got = Tensor::scalar(0.0);
  for (int64_t l = 0; l < cfg.layers; ++l) {
    std::vector<Tensor> wr(weights.begin() + 4 * D * l, weights.begin() + 4 * D * (l + 1));
    std::vector<Tensor> wg(w32.begin() + 4 * D * l, w32.begin() + 4 * D * (l + 1));
    const Tensor zeros = Tensor::zeros({D, N, H}, DType::FLOAT64);
    auto ref = reference_layer(cfg.cell, y_ref, wr, h0s[l].defined() ? h0s[l] : zeros,
                               c0s[l].defined() ? c0s[l] : zeros, cfg.bidirectional, cfg.reverse);
    auto got = nn::functional::rnn_layer(y_got, wg, h032[l], c032[l], cfg.cell, cfg.bidirectional,
                                         cfg.reverse, cfg.batch_major);
    expect_close(bm(got.y), ref[0], 2e-5, what + " y of layer " + std::to_string(l));
    expect_close(got.h_n, ref[1], 2e-5, what + " h_n of layer " + std::to_string(l));
    ASSERT_EQ(got.c_n.defined(), lstm) << what;
    if (lstm) expect_close(got.c_n, ref[2], 2e-5, what + " c_n of layer " + std::to_string(l));
    // Weighted sums of the states, so that their gradients are not all ones.
    Tensor rh = crew::uniform({D, N, H}, -1, 1, DType::FLOAT64, &gen);
    loss_ref = crew::add(loss_ref, crew::sum(crew::mul(ref[1], rh)));
    loss_got = crew::add(loss_got, crew::sum(crew::mul(got.h_n, rh.to(DType::FLOAT32))));
    if (lstm) {
      Tensor rc = crew::uniform({D, N, H}, -1, 1, DType::FLOAT64, &gen);
      loss_ref = crew::add(loss_ref, crew::sum(crew::mul(ref[2], rc)));
      loss_got = crew::add(loss_got, crew::sum(crew::mul(got.c_n, rc.to(DType::FLOAT32))));
    }
    y_ref = ref[0];
    y_got = got.y;
  }
  Tensor ry = crew::uniform(y_ref.shape(), -1, 1, DType::FLOAT64, &gen);
  loss_ref = crew::add(loss_ref, crew::sum(crew::mul(y_ref, ry)));
  loss_got = crew::add(loss_got, crew::sum(crew::mul(bm(y_got), ry.to(DType::FLOAT32))));
  loss_ref.backward();
  loss_got.backward();
  const double tol = 1e-4;
  expect_close(bm(x32.grad()), x.grad(), tol, what + " grad x");
  for (size_t i = 0; i < weights.size(); ++i) {
    if (!weights[i].defined()) continue;
    expect_close(w32[i].grad(), weights[i].grad(), tol, what + " grad of weight " + std::to_string(i));
  }
  for (int64_t l = 0; l < cfg.layers; ++l) {
    if (h0s[l].defined()) expect_close(h032[l].grad(), h0s[l].grad(), tol, what + " grad h0");
    if (c0s[l].defined()) expect_close(c032[l].grad(), c0s[l].grad(), tol, what + " grad c0");
  }
}

TEST(FunctionalRnnTest, MatchesReferenceOneLayerBothDirections) {
  for (RnnCell cell : kCells) {
    for (int dir = 0; dir < 3; ++dir) {
      for (bool init : {false, true}) {
        SCOPED_TRACE(kernels::rnn_cell_name(cell));
        check_config({cell, 1, dir == 2, dir == 1, init, true});
      }
    }
  }
}

TEST(FunctionalRnnTest, MatchesReferenceTwoLayers) {
  for (RnnCell cell : kCells) {
    for (bool bidirectional : {false, true}) check_config({cell, 2, bidirectional, false, true, true});
  }
}

TEST(FunctionalRnnTest, BatchMajor) {
  for (RnnCell cell : kCells) {
    check_config({cell, 2, true, false, true, true, true});
    check_config({cell, 1, false, true, false, true, true});
  }
}

TEST(FunctionalRnnTest, WithoutBiases) {
  for (RnnCell cell : kCells) check_config({cell, 1, true, false, true, false});
}

TEST(FunctionalRnnTest, GradcheckFloat32) {
  // Central differences on the float32 kernel itself (small sizes, float32 tolerances).
  for (RnnCell cell : kCells) {
    SCOPED_TRACE(kernels::rnn_cell_name(cell));
    const int64_t G = kernels::rnn_gate_count(cell), H = 2, I = 3, N = 2, T = 3;
    const bool lstm = cell == RnnCell::LSTM;
    auto in = [](const Shape& s, uint64_t seed) { return random_input(s, DType::FLOAT32, seed); };
    std::vector<Tensor> inputs{in({T, N, I}, 1), in({2, N, H}, 2), in({2, N, H}, 3)};
    for (uint64_t d = 0; d < 2; ++d) {
      inputs.push_back(in({G * H, I}, 10 + d));
      inputs.push_back(in({G * H, H}, 20 + d));
      inputs.push_back(in({G * H}, 30 + d));
      inputs.push_back(in({G * H}, 40 + d));
    }
    if (!lstm) inputs[2].set_stop_gradient(true);
    expect_gradients_match(
        [cell, lstm](const std::vector<Tensor>& v) {
          std::vector<Tensor> w(v.begin() + 3, v.end());
          auto o = F::rnn_layer(v[0], w, v[1], lstm ? v[2] : Tensor(), cell, true);
          std::vector<Tensor> parts{crew::reshape(o.y, {-1}), crew::reshape(o.h_n, {-1})};
          if (lstm) parts.push_back(crew::reshape(o.c_n, {-1}));
          return crew::concat(parts, 0);
        },
        inputs, crew::testing::float32_options());
  }
}

TEST(FunctionalRnnTest, NoGraphWithoutGradients) {
  Tensor x = Tensor::ones({2, 1, 3});
  std::vector<Tensor> w{Tensor::ones({4, 3}), Tensor::ones({4, 1}), Tensor(), Tensor()};
  auto o = F::rnn_layer(x, w, Tensor(), Tensor(), RnnCell::LSTM, false);
  EXPECT_FALSE(o.y.requires_grad());
  EXPECT_EQ(o.y.shape(), (Shape{2, 1, 1}));
  EXPECT_EQ(o.c_n.shape(), (Shape{1, 1, 1}));
}

TEST(FunctionalRnnTest, BadShapesAreValueErrors) {
  Tensor x = Tensor::ones({2, 1, 3});
  std::vector<Tensor> w{Tensor::ones({4, 3}), Tensor::ones({4, 1}), Tensor(), Tensor()};
  // GRU wants 3 gates: weight_ih [4, 3] is wrong for hidden 1... and names the weight.
  try {
    F::rnn_layer(x, w, Tensor(), Tensor(), RnnCell::GRU, false);
    FAIL() << "no error";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("weight_ih"), std::string::npos) << e.what();
  }
  EXPECT_THROW(F::rnn_layer(Tensor::ones({2, 3}), w, Tensor(), Tensor(), RnnCell::LSTM, false), ValueError);
  EXPECT_THROW(F::rnn_layer(x, w, Tensor::ones({2, 1, 1}), Tensor(), RnnCell::LSTM, false), ValueError);
  EXPECT_THROW(F::rnn_layer(x.to(DType::FLOAT64), w, Tensor(), Tensor(), RnnCell::LSTM, false), ValueError);
  std::vector<Tensor> too_few{Tensor::ones({4, 3}), Tensor::ones({4, 1})};
  EXPECT_THROW(F::rnn_layer(x, too_few, Tensor(), Tensor(), RnnCell::LSTM, false), ValueError);
}

}  // namespace
}  // namespace crew
