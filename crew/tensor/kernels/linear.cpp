#include "crew/tensor/kernels/linear.h"

#include <algorithm>
#include <type_traits>

#include "crew/tensor/kernels/gemm.h"
#include "crew/tensor/kernels/low_precision.h"

namespace crew::kernels {
namespace {

template <typename T>
void linear_forward_typed(const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& y, int64_t m) {
  const int64_t in = w.size(0), out = w.size(1);
  T* yp = y.data<T>();
  if constexpr (std::is_same_v<T, float>) {
    if (m > 0 && in > 0 && out > 0) {
      linear_f32(m, in, out, x.data<float>(), w.data<float>(), b.defined() ? b.data<float>() : nullptr, yp);
      return;
    }
  }
  if (b.defined()) {
    const T* bp = b.data<T>();
    for (int64_t r = 0; r < m; ++r) std::copy(bp, bp + out, yp + r * out);
  }
  gemm(false, false, m, out, in, T(1), x.data<T>(), in, w.data<T>(), out, b.defined() ? T(1) : T(0), yp, out);
}

template <typename T>
std::vector<Tensor> linear_backward_typed(const Tensor& g, const Tensor& x, const Tensor& w, int64_t m,
                                          LinearNeeds needs) {
  const int64_t in = w.size(0), out = w.size(1);
  std::vector<Tensor> grads(3);
  const T* gp = g.data<T>();
  if (needs.x) {
    grads[0] = Tensor::uninitialized(x.shape(), x.dtype());
    gemm(false, true, m, in, out, T(1), gp, out, w.data<T>(), out, T(0), grads[0].data<T>(), in);
  }
  if (needs.weight) {
    grads[1] = Tensor::uninitialized(w.shape(), w.dtype());
    gemm(true, false, in, out, m, T(1), x.data<T>(), in, gp, out, T(0), grads[1].data<T>(), out);
  }
  if (needs.bias) {
    grads[2] = Tensor::zeros({out}, w.dtype());
    T* db = grads[2].data<T>();
    for (int64_t r = 0; r < m; ++r) {
      for (int64_t j = 0; j < out; ++j) db[j] += gp[r * out + j];
    }
  }
  return grads;
}

Tensor linear_forward_cpu(const Tensor& x, const Tensor& weight, const Tensor& bias);

// bfloat16/float16: one oneDNN matmul with the bias fused, or float32 on converted operands.
Tensor linear_forward_half(const Tensor& x, const Tensor& w, const Tensor& b) {
  const int64_t in = w.size(0), out = w.size(1), m = x.numel() / std::max<int64_t>(in, 1);
  if (!dnnl_supports(x.dtype(), "linear") || m == 0 || in == 0 || out == 0) {
    return linear_forward_cpu(to_float32(x), to_float32(w), b.defined() ? to_float32(b) : b).to(x.dtype());
  }
  Shape out_shape = x.shape();
  out_shape.back() = out;
  Tensor y = Tensor::uninitialized(out_shape, x.dtype());
  linear_dnnl(m, in, out, x.raw_data("linear"), w.raw_data("linear"),
              b.defined() ? b.raw_data("linear") : nullptr, y.raw_data("linear"), x.dtype());
  return y;
}

// bfloat16/float16 gradients: the two products on matmul's 16-bit kernel, the bias sum in
// float32 rounded once.
std::vector<Tensor> linear_backward_half(const Tensor& g, const Tensor& x, const Tensor& w,
                                         LinearNeeds needs) {
  const int64_t in = w.size(0), out = w.size(1), m = x.numel() / std::max<int64_t>(in, 1);
  const Tensor g2 = g.view({m, out});
  std::vector<Tensor> grads(3);
  if (needs.x) grads[0] = matmul(g2, w, false, true).view(x.shape());
  if (needs.weight) grads[1] = matmul(x.view({m, in}), g2, true, false);
  if (needs.bias) {
    const Tensor g32 = to_float32(g2);
    Tensor db = Tensor::zeros({out});
    const float* gp = g32.data<float>();
    float* dp = db.data<float>();
    for (int64_t r = 0; r < m; ++r) {
      for (int64_t j = 0; j < out; ++j) dp[j] += gp[r * out + j];
    }
    grads[2] = db.to(w.dtype());
  }
  return grads;
}

Tensor linear_forward_cpu(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  if (is_low_precision(x.dtype())) return linear_forward_half(x, weight, bias);
  const int64_t m = x.numel() / weight.size(0);
  Shape out_shape = x.shape();
  out_shape.back() = weight.size(1);
  Tensor y = Tensor::uninitialized(out_shape, x.dtype());
  if (x.dtype() == DType::FLOAT32) {
    linear_forward_typed<float>(x, weight, bias, y, m);
  } else {
    linear_forward_typed<double>(x, weight, bias, y, m);
  }
  return y;
}

std::vector<Tensor> linear_backward_cpu(const Tensor& g, const Tensor& x, const Tensor& weight,
                                        LinearNeeds needs) {
  if (is_low_precision(g.dtype())) return linear_backward_half(g, x, weight, needs);
  const int64_t m = x.numel() / weight.size(0);
  if (g.dtype() == DType::FLOAT32) return linear_backward_typed<float>(g, x, weight, m, needs);
  return linear_backward_typed<double>(g, x, weight, m, needs);
}

}  // namespace

constinit KernelSlot<LinearForwardFn> linear_forward_kernel("linear_forward", &linear_forward_cpu);
constinit KernelSlot<LinearBackwardFn> linear_backward_kernel("linear_backward", &linear_backward_cpu);

Tensor linear_forward(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  check_same_place("linear", {{"x", &x}, {"weight", &weight}, {"bias", &bias}});
  return linear_forward_kernel.get(x.place().type)(x, weight, bias);
}

std::vector<Tensor> linear_backward(const Tensor& grad_y, const Tensor& x, const Tensor& weight,
                                    LinearNeeds needs) {
  check_same_place("linear backward", {{"grad_y", &grad_y}, {"x", &x}, {"weight", &weight}});
  return linear_backward_kernel.get(grad_y.place().type)(grad_y, x, weight, needs);
}

}  // namespace crew::kernels
