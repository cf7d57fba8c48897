#include "crew/tensor/ops/pool_direct.h"

#include <algorithm>
#include <limits>

#include "crew/tensor/ops/threading.h"

namespace crew::ops::detail {
namespace {

struct Plane {
  int64_t h, w, oh, ow;
};

// Window of output (oy, ox) clipped to the input: rows [y0, y1), columns [x0, x1).
struct Window {
  int64_t y0, y1, x0, x1;
};

inline Window window(const Plane& d, const Pool2dParams& p, int64_t oy, int64_t ox) {
  const int64_t ys = oy * p.stride[0] - p.padding[0];
  const int64_t xs = ox * p.stride[1] - p.padding[1];
  return {std::max<int64_t>(ys, 0), std::min<int64_t>(ys + p.kernel[0], d.h), std::max<int64_t>(xs, 0),
          std::min<int64_t>(xs + p.kernel[1], d.w)};
}

bool is_2x2_stride2(const Pool2dParams& p) {
  return p.kernel[0] == 2 && p.kernel[1] == 2 && p.stride[0] == 2 && p.stride[1] == 2 && p.padding[0] == 0 &&
         p.padding[1] == 0;
}

// The common 2x2 / stride 2 / no padding max pool: no bounds checks, two rows at a time.
void max_2x2(const float* x, float* y, int32_t* arg, const Plane& d) {
  for (int64_t oy = 0; oy < d.oh; ++oy) {
    const float* r0 = x + 2 * oy * d.w;
    const float* r1 = r0 + d.w;
    const int32_t base = static_cast<int32_t>(2 * oy * d.w);
    for (int64_t ox = 0; ox < d.ow; ++ox) {
      const int64_t c = 2 * ox;
      float best = r0[c];
      int32_t at = base + static_cast<int32_t>(c);
      if (r0[c + 1] > best) best = r0[c + 1], at = base + static_cast<int32_t>(c + 1);
      if (r1[c] > best) best = r1[c], at = base + static_cast<int32_t>(d.w + c);
      if (r1[c + 1] > best) best = r1[c + 1], at = base + static_cast<int32_t>(d.w + c + 1);
      y[oy * d.ow + ox] = best;
      arg[oy * d.ow + ox] = at;
    }
  }
}

void max_general(const float* x, float* y, int32_t* arg, const Plane& d, const Pool2dParams& p) {
  for (int64_t oy = 0; oy < d.oh; ++oy) {
    for (int64_t ox = 0; ox < d.ow; ++ox) {
      const Window win = window(d, p, oy, ox);
      float best = -std::numeric_limits<float>::infinity();
      int64_t at = win.y0 * d.w + win.x0;
      for (int64_t iy = win.y0; iy < win.y1; ++iy) {
        for (int64_t ix = win.x0; ix < win.x1; ++ix) {
          const float v = x[iy * d.w + ix];
          if (v > best) best = v, at = iy * d.w + ix;
        }
      }
      y[oy * d.ow + ox] = best;
      arg[oy * d.ow + ox] = static_cast<int32_t>(at);
    }
  }
}

void avg_general(const float* x, float* y, const Plane& d, const Pool2dParams& p) {
  for (int64_t oy = 0; oy < d.oh; ++oy) {
    for (int64_t ox = 0; ox < d.ow; ++ox) {
      const Window win = window(d, p, oy, ox);
      float total = 0;
      for (int64_t iy = win.y0; iy < win.y1; ++iy) {
        for (int64_t ix = win.x0; ix < win.x1; ++ix) total += x[iy * d.w + ix];
      }
      y[oy * d.ow + ox] = total / static_cast<float>((win.y1 - win.y0) * (win.x1 - win.x0));
    }
  }
}

Plane plane_of(const Shape& x, const Shape& y) { return {x[2], x[3], y[2], y[3]}; }

}  // namespace

void pool2d_direct_forward(PoolKind kind, const Tensor& x, const Pool2dParams& p, const Tensor& y,
                           const Tensor& argmax) {
  const Plane d = plane_of(x.shape(), y.shape());
  const int64_t planes = x.size(0) * x.size(1);
  const float* xp = x.data<float>();
  float* yp = y.data<float>();
  int32_t* args = kind == PoolKind::MAX ? argmax.data<int32_t>() : nullptr;
  crew::detail::parallel_for(planes, 16, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const float* src = xp + i * d.h * d.w;
      float* dst = yp + i * d.oh * d.ow;
      if (kind == PoolKind::AVG) {
        avg_general(src, dst, d, p);
      } else if (is_2x2_stride2(p)) {
        max_2x2(src, dst, args + i * d.oh * d.ow, d);
      } else {
        max_general(src, dst, args + i * d.oh * d.ow, d, p);
      }
    }
  });
}

void pool2d_direct_backward(PoolKind kind, const Tensor& grad_y, const Tensor& argmax, const Pool2dParams& p,
                            const Tensor& grad_x) {
  const Plane d = plane_of(grad_x.shape(), grad_y.shape());
  const int64_t planes = grad_x.size(0) * grad_x.size(1);
  const float* gy = grad_y.data<float>();
  float* gx = grad_x.data<float>();
  const int32_t* args = kind == PoolKind::MAX ? argmax.data<int32_t>() : nullptr;
  // Planes are independent, so threads never write the same element.
  crew::detail::parallel_for(planes, 16, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const float* g = gy + i * d.oh * d.ow;
      float* dst = gx + i * d.h * d.w;
      // grad_x comes uninitialised: zero the plane here, so it is still in cache for the scatter.
      std::fill(dst, dst + d.h * d.w, 0.0f);
      if (kind == PoolKind::MAX) {
        const int32_t* arg = args + i * d.oh * d.ow;
        for (int64_t k = 0; k < d.oh * d.ow; ++k) dst[arg[k]] += g[k];
        continue;
      }
      for (int64_t oy = 0; oy < d.oh; ++oy) {
        for (int64_t ox = 0; ox < d.ow; ++ox) {
          const Window win = window(d, p, oy, ox);
          const float share = g[oy * d.ow + ox] / static_cast<float>((win.y1 - win.y0) * (win.x1 - win.x0));
          for (int64_t iy = win.y0; iy < win.y1; ++iy) {
            for (int64_t ix = win.x0; ix < win.x1; ++ix) dst[iy * d.w + ix] += share;
          }
        }
      }
    }
  });
}

}  // namespace crew::ops::detail
