#pragma once
// Naive reference kernels (double precision, direct loops) that the fast oneDNN / OpenBLAS
// kernels are tested against. Test-only: nothing in crew/ uses these.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "crew/tensor/kernels/conv.h"
#include "crew/tensor/kernels/pool.h"
#include "crew/tensor/tensor.h"

namespace crew::reference {

struct ConvDims {
  int64_t n, c, h, w, o, kh, kw, oh, ow, groups;
};

inline ConvDims conv_dims(const Shape& x, const Shape& w, const kernels::Conv2dParams& p) {
  const Shape y = kernels::conv2d_output_shape(x, w, p);
  return {x[0], x[1], x[2], x[3], w[0], w[2], w[3], y[2], y[3], p.groups};
}

// Calls f(xi, wi, yi) for every in-bounds tap of the convolution: the flat indices of the
// input element (NCHW), the weight (OIHW, I = channels per group) and the output (NCHW) it
// joins.
template <typename F>
void for_each_tap(const ConvDims& d, const kernels::Conv2dParams& p, F f) {
  const int64_t cg = d.c / d.groups, og = d.o / d.groups;
  for (int64_t n = 0; n < d.n; ++n)
    for (int64_t o = 0; o < d.o; ++o)
      for (int64_t oy = 0; oy < d.oh; ++oy)
        for (int64_t ox = 0; ox < d.ow; ++ox)
          for (int64_t ci = 0; ci < cg; ++ci)
            for (int64_t ky = 0; ky < d.kh; ++ky)
              for (int64_t kx = 0; kx < d.kw; ++kx) {
                const int64_t iy = oy * p.stride[0] - p.padding[0] + ky * p.dilation[0];
                const int64_t ix = ox * p.stride[1] - p.padding[1] + kx * p.dilation[1];
                if (iy < 0 || iy >= d.h || ix < 0 || ix >= d.w) continue;
                const int64_t c = (o / og) * cg + ci;
                f(((n * d.c + c) * d.h + iy) * d.w + ix, ((o * cg + ci) * d.kh + ky) * d.kw + kx,
                  ((n * d.o + o) * d.oh + oy) * d.ow + ox);
              }
}

inline std::vector<double> conv2d(const Tensor& x, const Tensor& w, const Tensor& b,
                                  const kernels::Conv2dParams& p) {
  const ConvDims d = conv_dims(x.shape(), w.shape(), p);
  const auto xv = x.to_vector<double>(), wv = w.to_vector<double>();
  std::vector<double> y(d.n * d.o * d.oh * d.ow, 0.0);
  if (b.defined()) {
    const auto bv = b.to_vector<double>();
    for (size_t i = 0; i < y.size(); ++i) y[i] = bv[(i / (d.oh * d.ow)) % d.o];
  }
  for_each_tap(d, p, [&](int64_t xi, int64_t wi, int64_t yi) { y[yi] += xv[xi] * wv[wi]; });
  return y;
}

inline std::vector<double> conv2d_backward_data(const Tensor& gy, const Tensor& w, const Shape& xs,
                                                const kernels::Conv2dParams& p) {
  const ConvDims d = conv_dims(xs, w.shape(), p);
  const auto gv = gy.to_vector<double>(), wv = w.to_vector<double>();
  std::vector<double> gx(shape_numel(xs), 0.0);
  for_each_tap(d, p, [&](int64_t xi, int64_t wi, int64_t yi) { gx[xi] += gv[yi] * wv[wi]; });
  return gx;
}

inline std::vector<double> conv2d_backward_weights(const Tensor& gy, const Tensor& x, const Shape& ws,
                                                   const kernels::Conv2dParams& p) {
  const ConvDims d = conv_dims(x.shape(), ws, p);
  const auto gv = gy.to_vector<double>(), xv = x.to_vector<double>();
  std::vector<double> gw(shape_numel(ws), 0.0);
  for_each_tap(d, p, [&](int64_t xi, int64_t wi, int64_t yi) { gw[wi] += gv[yi] * xv[xi]; });
  return gw;
}

// Pooling windows clipped to the input (padding never wins a max nor counts in an average).
template <typename F>
void for_each_window(const Shape& xs, const kernels::Pool2dParams& p, F f) {
  const Shape ys = kernels::pool2d_output_shape(xs, p);
  for (int64_t nc = 0; nc < xs[0] * xs[1]; ++nc)
    for (int64_t oy = 0; oy < ys[2]; ++oy)
      for (int64_t ox = 0; ox < ys[3]; ++ox) {
        const int64_t y0 = std::max<int64_t>(oy * p.stride[0] - p.padding[0], 0);
        const int64_t x0 = std::max<int64_t>(ox * p.stride[1] - p.padding[1], 0);
        const int64_t y1 = std::min<int64_t>(oy * p.stride[0] - p.padding[0] + p.kernel[0], xs[2]);
        const int64_t x1 = std::min<int64_t>(ox * p.stride[1] - p.padding[1] + p.kernel[1], xs[3]);
        f(nc, (nc * ys[2] + oy) * ys[3] + ox, y0, y1, x0, x1);
      }
}

inline std::vector<double> pool2d(kernels::PoolKind kind, const Tensor& x, const kernels::Pool2dParams& p) {
  const Shape& xs = x.shape();
  const auto xv = x.to_vector<double>();
  std::vector<double> y(shape_numel(kernels::pool2d_output_shape(xs, p)));
  for_each_window(xs, p, [&](int64_t nc, int64_t out, int64_t y0, int64_t y1, int64_t x0, int64_t x1) {
    double best = -std::numeric_limits<double>::infinity(), total = 0;
    for (int64_t iy = y0; iy < y1; ++iy)
      for (int64_t ix = x0; ix < x1; ++ix) {
        const double v = xv[(nc * xs[2] + iy) * xs[3] + ix];
        best = std::max(best, v);
        total += v;
      }
    y[out] = kind == kernels::PoolKind::MAX ? best : total / static_cast<double>((y1 - y0) * (x1 - x0));
  });
  return y;
}

inline std::vector<double> pool2d_backward(kernels::PoolKind kind, const Tensor& x, const Tensor& gy,
                                           const kernels::Pool2dParams& p) {
  const Shape& xs = x.shape();
  const auto xv = x.to_vector<double>(), gv = gy.to_vector<double>();
  std::vector<double> gx(xv.size(), 0.0);
  for_each_window(xs, p, [&](int64_t nc, int64_t out, int64_t y0, int64_t y1, int64_t x0, int64_t x1) {
    int64_t arg = -1;
    double best = -std::numeric_limits<double>::infinity();
    const double area = static_cast<double>((y1 - y0) * (x1 - x0));
    for (int64_t iy = y0; iy < y1; ++iy)
      for (int64_t ix = x0; ix < x1; ++ix) {
        const int64_t i = (nc * xs[2] + iy) * xs[3] + ix;
        if (kind == kernels::PoolKind::AVG) gx[i] += gv[out] / area;
        if (xv[i] > best) {
          best = xv[i];
          arg = i;
        }
      }
    if (kind == kernels::PoolKind::MAX) gx[arg] += gv[out];
  });
  return gx;
}

}  // namespace crew::reference
