#include "crew/tensor/kernels/softmax.h"

#include <algorithm>
#include <cmath>

#include "crew/tensor/kernels/low_precision.h"

namespace crew::kernels {
namespace {

// Calls f(base, step) for every line along the axis: elements base + e * step, e < extent.
template <typename F>
void for_each_line(const AxisSplit& p, F f) {
  for (int64_t o = 0; o < p.outer; ++o) {
    for (int64_t i = 0; i < p.inner; ++i) f(o * p.extent * p.inner + i, p.inner);
  }
}

template <typename T>
void forward_lines(const T* x, T* y, const AxisSplit& p, bool log_out) {
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

template <typename T>
void backward_lines(const T* g, const T* y, T* gx, const AxisSplit& p, bool log_out) {
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

Tensor softmax_forward_cpu(const Tensor& x, int64_t axis, bool log_out) {
  const AxisSplit p = split_at_axis(x.shape(), axis);
  Tensor y = Tensor::uninitialized(x.shape(), x.dtype());
  if (x.dtype() == DType::FLOAT32) {
    forward_lines(x.data<float>(), y.data<float>(), p, log_out);
  } else {
    forward_lines(x.data<double>(), y.data<double>(), p, log_out);
  }
  return y;
}

Tensor softmax_backward_cpu(const Tensor& g, const Tensor& y, int64_t axis, bool log_out) {
  const AxisSplit p = split_at_axis(y.shape(), axis);
  Tensor gx = Tensor::uninitialized(g.shape(), g.dtype());
  if (g.dtype() == DType::FLOAT32) {
    backward_lines(g.data<float>(), y.data<float>(), gx.data<float>(), p, log_out);
  } else {
    backward_lines(g.data<double>(), y.data<double>(), gx.data<double>(), p, log_out);
  }
  return gx;
}

}  // namespace

constinit KernelSlot<SoftmaxForwardFn> softmax_forward_kernel("softmax_forward", &softmax_forward_cpu);
constinit KernelSlot<SoftmaxBackwardFn> softmax_backward_kernel("softmax_backward", &softmax_backward_cpu);

// bfloat16/float16 through float32: the row statistics need float32 anyway.
Tensor softmax_forward(const Tensor& x, int64_t axis, bool log_out) {
  if (is_low_precision(x.dtype())) return softmax_forward(to_float32(x), axis, log_out).to(x.dtype());
  return softmax_forward_kernel.get(x.place().type)(x, axis, log_out);
}

Tensor softmax_backward(const Tensor& grad_y, const Tensor& y, int64_t axis, bool log_out) {
  check_same_place("softmax backward", {{"grad_y", &grad_y}, {"y", &y}});
  if (is_low_precision(grad_y.dtype())) {
    check_same_dtype("softmax backward", "grad_y", grad_y, "y", y);
    return softmax_backward(to_float32(grad_y), to_float32(y), axis, log_out).to(grad_y.dtype());
  }
  return softmax_backward_kernel.get(y.place().type)(grad_y, y, axis, log_out);
}

}  // namespace crew::kernels
