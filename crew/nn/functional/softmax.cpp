// softmax and log_softmax along an axis (numerically stable: the row maximum is subtracted).
#include <cmath>

#include "crew/autograd/function.h"
#include "crew/nn/functional.h"
#include "crew/tensor/kernels/broadcast.h"

namespace crew::nn::functional {
namespace {

// Calls f(base, step) for every line along the axis: elements base + e * step, e < extent.
template <typename F>
void for_each_line(const AxisSplit& p, F f) {
  for (int64_t o = 0; o < p.outer; ++o) {
    for (int64_t i = 0; i < p.inner; ++i) f(o * p.extent * p.inner + i, p.inner);
  }
}

template <typename T>
void softmax_forward(const T* x, T* y, const AxisSplit& p, bool log_out) {
  for_each_line(p, [&](int64_t base, int64_t step) {
    T mx = x[base];
    for (int64_t e = 1; e < p.extent; ++e) mx = std::max(mx, x[base + e * step]);
    T total = 0;
    for (int64_t e = 0; e < p.extent; ++e) total += std::exp(x[base + e * step] - mx);
    const T log_total = std::log(total);
    for (int64_t e = 0; e < p.extent; ++e) {
      const T shifted = x[base + e * step] - mx;
      y[base + e * step] = log_out ? shifted - log_total : std::exp(shifted - log_total);
    }
  });
}

// softmax: gx = y * (g - sum(g * y)); log_softmax: gx = g - exp(y) * sum(g).
template <typename T>
void softmax_backward(const T* g, const T* y, T* gx, const AxisSplit& p, bool log_out) {
  for_each_line(p, [&](int64_t base, int64_t step) {
    T dot = 0;
    for (int64_t e = 0; e < p.extent; ++e) {
      const int64_t k = base + e * step;
      dot += log_out ? g[k] : g[k] * y[k];
    }
    for (int64_t e = 0; e < p.extent; ++e) {
      const int64_t k = base + e * step;
      gx[k] = log_out ? g[k] - std::exp(y[k]) * dot : y[k] * (g[k] - dot);
    }
  });
}

Tensor softmax_impl(const Tensor& x, int64_t axis, bool log_out, const char* name) {
  kernels::check_floating(x, name);
  CREW_CHECK(x.dim() >= 1, name, ": tensor of shape ", shape_str(x.shape()), " has no axis");
  const AxisSplit p = split_at_axis(x.shape(), normalize_axis(axis, x.dim()));
  Tensor y = Tensor::uninitialized(x.shape(), x.dtype());
  if (x.dtype() == DType::FLOAT32) {
    softmax_forward(x.data<float>(), y.data<float>(), p, log_out);
  } else {
    softmax_forward(x.data<double>(), y.data<double>(), p, log_out);
  }
  if (autograd::should_record({&x})) {
    autograd::record(y, name, {x}, [p, log_out, y = y.detach()](const Tensor& g, const std::vector<bool>&) {
      Tensor gx = Tensor::uninitialized(g.shape(), g.dtype());
      if (g.dtype() == DType::FLOAT32) {
        softmax_backward(g.data<float>(), y.data<float>(), gx.data<float>(), p, log_out);
      } else {
        softmax_backward(g.data<double>(), y.data<double>(), gx.data<double>(), p, log_out);
      }
      return std::vector<Tensor>{gx};
    }, {y});
  }
  return y;
}

}  // namespace

Tensor softmax(const Tensor& x, int64_t axis) { return softmax_impl(x, axis, false, "softmax"); }
Tensor log_softmax(const Tensor& x, int64_t axis) { return softmax_impl(x, axis, true, "log_softmax"); }

}  // namespace crew::nn::functional
