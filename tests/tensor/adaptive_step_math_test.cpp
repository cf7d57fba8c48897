// The per-element RMSProp, Adagrad, Adadelta, Adamax and Lamb steps (crew/tensor/kernels/math)
// against a float64 reference of Paddle 2.4's formulas, in float32 and float64, on many inputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "crew/tensor/kernels/math/adamax_step.h"
#include "crew/tensor/kernels/math/adaptive_step.h"

namespace crew::kernels {
namespace {

// Inputs of magnitudes 1e-3 .. 1e1, exactly representable in float: p, g, a, c share one
// sign (so g + l2 p and the moment updates do not cancel; the final p - step may, and is
// compared against |p| + |step|); b >= a^2 >= 0 (a mean square over a mean).
struct Sample {
  double p, g, a, b, c;
};

template <typename Check>
void for_samples(unsigned seed, Check&& check) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (int i = 0; i < 5000; ++i) {
    const double mag = std::pow(10.0, 4.0 * unit(gen) - 3.0);
    const double sign = unit(gen) < 0.5 ? -1.0 : 1.0;
    const auto f = [](double x) { return static_cast<double>(static_cast<float>(x)); };
    const double a = f(sign * unit(gen) * mag);
    check(Sample{f(sign * unit(gen) * mag), f(sign * unit(gen) * mag), a, f(a * a + unit(gen) * mag * mag),
                 f(sign * unit(gen) * mag)},
          i);
  }
}

// |got - want| <= rel * scale (scale: the magnitudes the result is made of).
void expect_within(double got, double want, double scale, double rel, const char* what, int i) {
  ASSERT_LE(std::fabs(got - want), rel * scale + 1e-300)
      << what << " sample " << i << ": got " << got << ", want " << want;
}

TEST(AdaptiveStepMath, RmspropPlainAndCentered) {
  const double lr = 0.01, rho = 0.9, eps = 1e-6, mu = 0.5, l2 = 0.01;
  const RmspropStep<float> f32(lr, rho, eps, mu, l2);
  const RmspropStep<double> f64(lr, rho, eps, mu, l2);
  for_samples(1, [&](const Sample& s, int i) {
    const double gi = s.g + l2 * s.p;
    const double ms = rho * s.b + (1 - rho) * gi * gi;
    const double mg = rho * s.a + (1 - rho) * gi;
    const double mom_plain = mu * s.c + lr * gi / std::sqrt(ms + eps);
    const double d = ms - mg * mg + eps;
    const double mom_centered = mu * s.c + lr * gi / std::sqrt(d);

    float p = s.p, b = s.b, c = s.c;
    f32(p, s.g, b, c);
    expect_within(b, ms, ms, 1e-6, "float32 mean_square", i);
    expect_within(c, mom_plain, std::fabs(mom_plain), 1e-5, "float32 momentum", i);
    expect_within(p, s.p - mom_plain, std::fabs(s.p) + std::fabs(mom_plain), 1e-5, "float32 param", i);

    double pd = s.p, bd = s.b, ad = s.a, cd = s.c;
    f64(pd, s.g, bd, ad, cd);
    expect_within(ad, mg, std::fabs(mg), 1e-14, "float64 mean_grad", i);
    // ms - mg^2 may cancel: its rounding error is relative to ms, not to d.
    expect_within(cd, mom_centered, std::fabs(mom_centered) * (1 + ms / d), 1e-13,
                  "float64 centered momentum", i);
    expect_within(pd, s.p - mom_centered, std::fabs(s.p) + std::fabs(cd), 1e-15, "float64 param", i);
  });
}

TEST(AdaptiveStepMath, AdagradAndAdadelta) {
  const double lr = 0.1, eps = 1e-6, rho = 0.95, l2 = 0.001;
  const AdagradStep<float> ada32{static_cast<float>(lr), static_cast<float>(eps), static_cast<float>(l2)};
  const AdagradStep<double> ada64{lr, eps, l2};
  const AdadeltaStep<float> delta32(rho, eps, l2);
  const AdadeltaStep<double> delta64(rho, eps, l2);
  for_samples(2, [&](const Sample& s, int i) {
    const double gi = s.g + l2 * s.p;
    const double m = s.b + gi * gi;
    const double step = lr * gi / (std::sqrt(m) + eps);
    float p = s.p, b = s.b;
    ada32(p, s.g, b);
    expect_within(b, m, m, 1e-6, "float32 adagrad moment", i);
    expect_within(p, s.p - step, std::fabs(s.p) + std::fabs(step), 1e-5, "float32 adagrad param", i);
    double pd = s.p, bd = s.b;
    ada64(pd, s.g, bd);
    expect_within(pd, s.p - step, std::fabs(s.p) + std::fabs(step), 1e-14, "float64 adagrad param", i);

    const double asg = rho * s.b + (1 - rho) * gi * gi;
    const double u = -std::sqrt((std::fabs(s.c) + eps) / (asg + eps)) * gi;
    const double asu = rho * std::fabs(s.c) + (1 - rho) * u * u;
    float p2 = s.p, b2 = s.b, c2 = std::fabs(s.c);
    delta32(p2, s.g, b2, c2);
    expect_within(c2, asu, asu, 1e-5, "float32 avg_squared_update", i);
    expect_within(p2, s.p + u, std::fabs(s.p) + std::fabs(u), 1e-5, "float32 adadelta param", i);
    double pd2 = s.p, bd2 = s.b, cd2 = std::fabs(s.c);
    delta64(pd2, s.g, bd2, cd2);
    expect_within(bd2, asg, asg, 1e-14, "float64 avg_squared_grad", i);
    expect_within(cd2, asu, asu, 1e-13, "float64 avg_squared_update", i);
    expect_within(pd2, s.p + u, std::fabs(s.p) + std::fabs(u), 1e-13, "float64 adadelta param", i);
  });
}

TEST(AdaptiveStepMath, AdamaxAndLambMoments) {
  const double b1 = 0.9, b2 = 0.999, eps = 1e-8, lr_t = 0.002 / (1 - 0.81), l2 = 0.01;
  const AdamaxStep<float> max32(b1, b2, eps, lr_t, l2);
  const AdamaxStep<double> max64(b1, b2, eps, lr_t, l2);
  const double pow1 = 0.729, pow2 = 0.997002999, wd = 0.01, lamb_eps = 1e-6;
  const LambMomentStep<float> lamb32(b1, b2, pow1, pow2, lamb_eps, wd);
  const LambMomentStep<double> lamb64(b1, b2, pow1, pow2, lamb_eps, wd);
  for_samples(3, [&](const Sample& s, int i) {
    const double gi = s.g + l2 * s.p;
    const double m = b1 * s.a + (1 - b1) * gi;
    const double u = std::max(b2 * s.b + eps, std::fabs(gi));
    const double step = lr_t * m / u;
    float p = s.p, a = s.a, b = s.b;
    max32(p, s.g, a, b);
    expect_within(b, u, u, 1e-6, "float32 inf_norm", i);
    expect_within(p, s.p - step, std::fabs(s.p) + std::fabs(step), 1e-5, "float32 adamax param", i);
    double pd = s.p, ad = s.a, bd = s.b;
    max64(pd, s.g, ad, bd);
    expect_within(ad, m, std::fabs(m), 1e-14, "float64 adamax moment", i);
    expect_within(pd, s.p - step, std::fabs(s.p) + std::fabs(step), 1e-14, "float64 adamax param", i);

    const double m1 = b1 * s.a + (1 - b1) * s.g;
    const double v = b2 * s.b + (1 - b2) * s.g * s.g;
    const double r = (m1 / (1 - pow1)) / (std::sqrt(v / (1 - pow2)) + lamb_eps) + wd * s.p;
    float a2 = s.a, v2 = s.b;
    const float r32 = lamb32(static_cast<float>(s.p), static_cast<float>(s.g), a2, v2);
    expect_within(r32, r, std::fabs(r), 1e-5, "float32 lamb r", i);
    double a3 = s.a, v3 = s.b;
    const double r64 = lamb64(s.p, s.g, a3, v3);
    expect_within(v3, v, v, 1e-14, "float64 lamb moment2", i);
    expect_within(r64, r, std::fabs(r), 1e-13, "float64 lamb r", i);
  });
}

}  // namespace
}  // namespace crew::kernels
