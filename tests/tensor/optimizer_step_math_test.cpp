// The per-element optimizer steps written once for host and device (crew/tensor/kernels/math)
// against a float64 reference of the same formula, on many inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "crew/tensor/kernels/math/adam_step.h"
#include "crew/tensor/kernels/math/sgd_step.h"

namespace crew::kernels {
namespace {

// |got - want| <= rel * scale, scale the sum of the magnitudes of the terms want is made of.
void expect_within(double got, double want, double scale, double rel, const char* what, int i) {
  ASSERT_LE(std::fabs(got - want), rel * scale + 1e-300)
      << what << " sample " << i << ": got " << got << ", want " << want;
}

struct AdamCase {
  double beta1, beta2, lr_t, eps_t, l2, decay;
};

TEST(AdamStepMath, Float32AndFloat64MatchAFloat64Reference) {
  std::mt19937 gen(7);
  std::uniform_real_distribution<double> signed_unit(-1.0, 1.0), unit(0.0, 1.0);
  const AdamCase cases[] = {
      {0.9, 0.999, 1e-3, 1e-8, 0.0, 1.0},
      {0.9, 0.999, 3e-4 * std::sqrt(1 - 0.998) / (1 - 0.81), 1e-8 * std::sqrt(1 - 0.998), 0.01, 1.0},
      {0.8, 0.99, 0.1, 1e-6, 0.0, 1.0 - 0.1 * 0.01},  // AdamW's decay
      {0.0, 0.5, 2.0, 1e-3, 0.5, 0.9}};
  for (const AdamCase& c : cases) {
    const AdamStep<float> f32(c.beta1, c.beta2, c.lr_t, c.eps_t, c.l2, c.decay);
    const AdamStep<double> f64(c.beta1, c.beta2, c.lr_t, c.eps_t, c.l2, c.decay);
    for (int i = 0; i < 20000; ++i) {
      const double mag = std::pow(10.0, 6.0 * unit(gen) - 4.0);  // 1e-4 .. 1e2
      const float p0 = static_cast<float>(signed_unit(gen) * mag),
                  g = static_cast<float>(signed_unit(gen) * mag);
      const float m10 = static_cast<float>(signed_unit(gen) * mag),
                  m20 = static_cast<float>(unit(gen) * mag * mag);
      // The reference, in double from the float inputs.
      const double gi = g + c.l2 * p0;
      const double a = c.beta1 * m10 + (1 - c.beta1) * gi;
      const double b = c.beta2 * m20 + (1 - c.beta2) * gi * gi;
      const double step = c.lr_t * a / (std::sqrt(b) + c.eps_t);
      const double p_ref = p0 * c.decay - step;
      const double a_scale = std::fabs(c.beta1 * m10) + std::fabs((1 - c.beta1) * gi) + std::fabs(c.l2 * p0);
      const double b_scale = std::fabs(c.beta2 * m20) + std::fabs((1 - c.beta2) * gi * gi);
      // step's sensitivity to rounding in g' and m1 (g' may cancel), besides the terms themselves.
      const double p_scale =
          std::fabs(p0 * c.decay) + std::fabs(step) + c.lr_t * a_scale / (std::sqrt(b) + c.eps_t);

      float p = p0, m1 = m10, m2 = m20;
      f32(p, g, m1, m2);
      expect_within(m1, a, a_scale, 1e-6, "float32 moment1", i);
      expect_within(m2, b, b_scale, 1e-6, "float32 moment2", i);
      expect_within(p, p_ref, p_scale, 4e-6, "float32 param", i);

      double pd = p0, m1d = m10, m2d = m20;
      f64(pd, g, m1d, m2d);
      expect_within(m1d, a, a_scale, 1e-15, "float64 moment1", i);
      expect_within(m2d, b, b_scale, 1e-15, "float64 moment2", i);
      expect_within(pd, p_ref, p_scale, 1e-14, "float64 param", i);
    }
  }
}

TEST(SgdStepMath, SgdAndMomentumMatchAFloat64Reference) {
  std::mt19937 gen(11);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const double lr = 0.05, mu = 0.9, l2 = 1e-2;
  const SgdStep<float> sgd{static_cast<float>(lr), static_cast<float>(l2)};
  const MomentumStep<float, false> plain{static_cast<float>(lr), static_cast<float>(mu),
                                         static_cast<float>(l2)};
  const MomentumStep<float, true> nesterov{static_cast<float>(lr), static_cast<float>(mu),
                                           static_cast<float>(l2)};
  const MomentumStep<double, true> nesterov64{lr, mu, l2};
  for (int i = 0; i < 20000; ++i) {
    const float p0 = static_cast<float>(u(gen) * 10), g = static_cast<float>(u(gen) * 10);
    const float v0 = static_cast<float>(u(gen) * 10);
    const double gi = g + l2 * p0;
    const double scale =
        std::fabs(p0) + std::fabs(lr * g) + std::fabs(lr * l2 * p0) + std::fabs(lr * mu * v0);

    float p = p0;
    sgd(p, g);
    expect_within(p, p0 - lr * gi, scale, 1e-6, "sgd", i);

    const double v_ref = mu * v0 + gi;
    float pm = p0, v = v0;
    plain(pm, g, v);
    expect_within(v, v_ref, std::fabs(mu * v0) + std::fabs(gi), 1e-6, "momentum velocity", i);
    expect_within(pm, p0 - lr * v_ref, scale, 1e-6, "momentum param", i);

    const double pn_ref = p0 - lr * (gi + mu * v_ref);
    float pn = p0, vn = v0;
    nesterov(pn, g, vn);
    expect_within(pn, pn_ref, scale * 2, 1e-6, "nesterov param", i);
    double pd = p0, vd = v0;
    nesterov64(pd, g, vd);
    expect_within(pd, pn_ref, scale * 2, 1e-14, "nesterov float64 param", i);
  }
}

}  // namespace
}  // namespace crew::kernels
