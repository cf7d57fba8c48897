#pragma once
// The optimizers' per-element update loops over contiguous arrays (they run every step on
// every parameter, so they are written to vectorise: restrict pointers, no branches; Adam's
// float32 loop uses AVX2/FMA when compiled for it). n is the element count.
#include <cstdint>

namespace crew::optim::kernels {

// p -= lr * (g + l2 * p)
void sgd(float* p, const float* g, int64_t n, float lr, float l2);
void sgd(double* p, const double* g, int64_t n, double lr, double l2);

// g' = g + l2 * p;  v = mu * v + g';  p -= lr * v            (plain)
//                                     p -= lr * (g' + mu * v)  (nesterov)
void momentum(float* p, const float* g, float* v, int64_t n, float lr, float mu, float l2, bool nesterov);
void momentum(double* p, const double* g, double* v, int64_t n, double lr, double mu, double l2,
              bool nesterov);

// Coefficients of one Adam/AdamW step for one parameter (Paddle's adam kernel):
//   g' = g + l2 * p;  m1 = beta1 m1 + (1 - beta1) g';  m2 = beta2 m2 + (1 - beta2) g'^2
//   p = p * decay_scale - lr_t * m1 / (sqrt(m2) + eps_t)
// with lr_t = lr sqrt(1 - beta2^t) / (1 - beta1^t), eps_t = epsilon sqrt(1 - beta2^t), and
// decay_scale = 1 - lr * coeff for AdamW's decoupled decay (1 otherwise).
struct AdamCoefficients {
  double beta1 = 0.9;
  double beta2 = 0.999;
  double lr_t = 0.0;
  double eps_t = 0.0;
  double l2 = 0.0;
  double decay_scale = 1.0;
};

void adam(float* p, const float* g, float* m1, float* m2, int64_t n, const AdamCoefficients& c);
void adam(double* p, const double* g, double* m1, double* m2, int64_t n, const AdamCoefficients& c);

}  // namespace crew::optim::kernels
