#pragma once
// One row of layer normalisation over `cols` values: its mean and biased variance, the
// normalised (and scaled, shifted) row, and the row's backward. The float64 CPU loops of
// crew/tensor/kernels/layer_norm.cpp run these (float32 runs on oneDNN), a device backend's
// kernel the same code. weight / bias null: 1 / 0.
#include <cmath>
#include <cstdint>

#include "crew/tensor/kernels/host_device.h"

namespace crew::kernels::math {

template <typename T>
struct LayerNormRow {
  // mean and biased variance of x[0, cols), two passes.
  CREW_HD static void stats(const T* x, int64_t cols, T& mean, T& var) {
    T m = 0, v = 0;
    for (int64_t c = 0; c < cols; ++c) m += x[c];
    m /= static_cast<T>(cols);
    for (int64_t c = 0; c < cols; ++c) v += (x[c] - m) * (x[c] - m);
    v /= static_cast<T>(cols);
    mean = m, var = v;
  }
  CREW_HD static T rstd(T var, T eps) { return 1 / std::sqrt(var + eps); }
  // y = (x - mean) * rstd * w + b
  CREW_HD static void normalize(const T* x, int64_t cols, T mean, T rstd, const T* w, const T* b, T* y) {
    for (int64_t c = 0; c < cols; ++c) y[c] = (x[c] - mean) * rstd * (w ? w[c] : T(1)) + (b ? b[c] : T(0));
  }
  // dx = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat)), dxhat = g * w; adds this
  // row's share of d weight (g * xhat) and d bias (g) into dw / db when they are not null.
  CREW_HD static void backward(const T* g, const T* x, int64_t cols, T mean, T rstd, const T* w, T* dx, T* dw,
                               T* db) {
    T s1 = 0, s2 = 0;
    for (int64_t c = 0; c < cols; ++c) {
      const T xhat = (x[c] - mean) * rstd, dxhat = g[c] * (w ? w[c] : T(1));
      s1 += dxhat, s2 += dxhat * xhat;
      if (dw) dw[c] += g[c] * xhat;
      if (db) db[c] += g[c];
    }
    s1 /= static_cast<T>(cols), s2 /= static_cast<T>(cols);
    for (int64_t c = 0; c < cols; ++c) {
      const T xhat = (x[c] - mean) * rstd;
      dx[c] = rstd * (g[c] * (w ? w[c] : T(1)) - s1 - xhat * s2);
    }
  }
};

}  // namespace crew::kernels::math
