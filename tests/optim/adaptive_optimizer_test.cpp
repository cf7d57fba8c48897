// RMSProp, Adagrad, Adadelta, Adamax and Lamb: a few steps of each on float64 parameters
// against a plain reference of Paddle 2.4's formulas written here, and their checks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "crew/optim/optim.h"

namespace crew::optim {
namespace {

constexpr int kSteps = 4;
const std::vector<double> kStart = {0.5, -1.5, 2.0, 0.0, -0.25};

double grad_at(size_t i, int step) { return std::sin(1.3 * static_cast<double>(i) + 0.9 * step) + 0.1; }

// Runs the optimizer kSteps steps on kStart and compares with `reference`, which updates its
// own copy of the parameter from the gradients (one call per step).
void check_against(
    Optimizer& opt, Tensor& p,
    const std::function<void(std::vector<double>&, const std::vector<double>&, int)>& reference) {
  std::vector<double> want = kStart;
  for (int s = 0; s < kSteps; ++s) {
    std::vector<double> g(kStart.size());
    for (size_t i = 0; i < g.size(); ++i) g[i] = grad_at(i, s);
    p.set_grad(Tensor::from_vector<double>(g));
    opt.step();
    reference(want, g, s);
    std::vector<double> got = p.to_vector<double>();
    for (size_t i = 0; i < want.size(); ++i)
      ASSERT_NEAR(got[i], want[i], 1e-12) << "step " << s << " element " << i;
  }
}

Tensor make_param() {
  Tensor p = Tensor::from_vector<double>(kStart);
  p.set_stop_gradient(false);
  return p;
}

TEST(RMSProp, PlainCenteredAndMomentumMatchTheFormula) {
  for (bool centered : {false, true}) {
    Tensor p = make_param();
    const double lr = 0.01, rho = 0.9, eps = 1e-6, mu = 0.8, l2 = 0.05;
    RMSProp opt({p}, {.learning_rate = lr,
                      .rho = rho,
                      .epsilon = eps,
                      .momentum = mu,
                      .centered = centered,
                      .weight_decay = l2});
    std::vector<double> ms(5), mg(5), mom(5);
    check_against(opt, p, [&](std::vector<double>& w, const std::vector<double>& g, int) {
      for (size_t i = 0; i < w.size(); ++i) {
        const double gi = g[i] + l2 * w[i];
        ms[i] = rho * ms[i] + (1 - rho) * gi * gi;
        mg[i] = rho * mg[i] + (1 - rho) * gi;
        const double d = centered ? ms[i] - mg[i] * mg[i] + eps : ms[i] + eps;
        mom[i] = mu * mom[i] + lr * gi / std::sqrt(d);
        w[i] -= mom[i];
      }
    });
  }
}

TEST(Adagrad, MatchesTheFormulaFromItsInitialAccumulator) {
  Tensor p = make_param();
  const double lr = 0.1, eps = 1e-6, init = 0.5;
  Adagrad opt({p}, {.learning_rate = lr, .epsilon = eps, .initial_accumulator_value = init});
  std::vector<double> m(5, init);
  check_against(opt, p, [&](std::vector<double>& w, const std::vector<double>& g, int) {
    for (size_t i = 0; i < w.size(); ++i) {
      m[i] += g[i] * g[i];
      w[i] -= lr * g[i] / (std::sqrt(m[i]) + eps);
    }
  });
  EXPECT_THROW(Adagrad({p}, {.initial_accumulator_value = -1.0}), ValueError);
}

TEST(Adadelta, MatchesPaddle24WithoutTheLearningRate) {
  Tensor p = make_param();
  const double eps = 1e-6, rho = 0.95;
  Adadelta opt({p}, {.learning_rate = 123.0, .epsilon = eps, .rho = rho});  // the rate does not enter
  std::vector<double> asg(5), asu(5);
  check_against(opt, p, [&](std::vector<double>& w, const std::vector<double>& g, int) {
    for (size_t i = 0; i < w.size(); ++i) {
      asg[i] = rho * asg[i] + (1 - rho) * g[i] * g[i];
      const double u = -std::sqrt((asu[i] + eps) / (asg[i] + eps)) * g[i];
      asu[i] = rho * asu[i] + (1 - rho) * u * u;
      w[i] += u;
    }
  });
}

TEST(Adamax, MatchesTheFormulaWithBiasCorrection) {
  Tensor p = make_param();
  const double lr = 0.002, b1 = 0.9, b2 = 0.999, eps = 1e-8;
  Adamax opt({p}, {.learning_rate = lr});
  std::vector<double> m(5), u(5);
  check_against(opt, p, [&](std::vector<double>& w, const std::vector<double>& g, int s) {
    const double lr_t = lr / (1 - std::pow(b1, s + 1));
    for (size_t i = 0; i < w.size(); ++i) {
      m[i] = b1 * m[i] + (1 - b1) * g[i];
      u[i] = std::max(b2 * u[i] + eps, std::fabs(g[i]));
      w[i] -= lr_t * m[i] / u[i];
    }
  });
}

// Lamb's reference, over the whole parameter (the trust ratio is per parameter).
void lamb_reference(std::vector<double>& w, const std::vector<double>& g, int s, std::vector<double>& m,
                    std::vector<double>& v, double lr, double wd) {
  const double b1 = 0.9, b2 = 0.999, eps = 1e-6;
  std::vector<double> r(w.size());
  double pn = 0, rn = 0;
  for (size_t i = 0; i < w.size(); ++i) {
    m[i] = b1 * m[i] + (1 - b1) * g[i];
    v[i] = b2 * v[i] + (1 - b2) * g[i] * g[i];
    r[i] =
        (m[i] / (1 - std::pow(b1, s + 1))) / (std::sqrt(v[i] / (1 - std::pow(b2, s + 1))) + eps) + wd * w[i];
    pn += w[i] * w[i];
    rn += r[i] * r[i];
  }
  const double ratio = pn > 0 && rn > 0 ? std::sqrt(pn) / std::sqrt(rn) : 1.0;
  for (size_t i = 0; i < w.size(); ++i) w[i] -= lr * ratio * r[i];
}

TEST(Lamb, MatchesTheFormulaWithTheTrustRatio) {
  Tensor p = make_param();
  Lamb opt({p}, {.learning_rate = 0.01, .lamb_weight_decay = 0.1});
  std::vector<double> m(5), v(5);
  check_against(opt, p, [&](std::vector<double>& w, const std::vector<double>& g, int s) {
    lamb_reference(w, g, s, m, v, 0.01, 0.1);
  });
}

TEST(Lamb, ExcludedParametersGetNoWeightDecay) {
  Tensor weight = make_param();
  Tensor bias = make_param();
  Lamb opt(
      NamedParameters{{"fc.weight", weight}, {"fc.bias", bias}},
      {.learning_rate = 0.01,
       .lamb_weight_decay = 0.1,
       .exclude_from_weight_decay = [](size_t, const std::string& name) { return name.ends_with(".bias"); }});
  std::vector<double> g(5, 0.5);
  weight.set_grad(Tensor::from_vector<double>(g));
  bias.set_grad(Tensor::from_vector<double>(g));
  opt.step();
  std::vector<double> w = kStart, b = kStart, m(5), v(5), m2(5), v2(5);
  lamb_reference(w, g, 0, m, v, 0.01, 0.1);
  lamb_reference(b, g, 0, m2, v2, 0.01, 0.0);
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_NEAR(weight.to_vector<double>()[i], w[i], 1e-12);
    EXPECT_NEAR(bias.to_vector<double>()[i], b[i], 1e-12);
  }
  EXPECT_GT(std::fabs(w[0] - b[0]), 1e-6);  // the decay made a difference
}

TEST(AdaptiveOptimizers, RejectBadOptions) {
  Tensor p = make_param();
  EXPECT_THROW(RMSProp({p}, {.rho = 1.0}), ValueError);
  EXPECT_THROW(Adadelta({p}, {.epsilon = 0.0}), ValueError);
  EXPECT_THROW(Adamax({p}, {.beta1 = 1.0}), ValueError);
  EXPECT_THROW(Lamb({p}, {.lamb_weight_decay = -0.1}), ValueError);
}

}  // namespace
}  // namespace crew::optim
