// linear: y = x W + b with W [in, out] (Paddle's layout): float32 on one oneDNN matmul with the
// bias fused, float64 on OpenBLAS gemm.
#include <type_traits>

#include "crew/autograd/function.h"
#include "crew/nn/functional.h"
#include "crew/tensor/kernels/broadcast.h"
#include "crew/tensor/kernels/gemm.h"

namespace crew::nn::functional {
namespace {

template <typename T>
void linear_forward(const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& y, int64_t m) {
  const int64_t in = w.size(0), out = w.size(1);
  T* yp = y.data<T>();
  if constexpr (std::is_same_v<T, float>) {
    if (m > 0 && in > 0 && out > 0) {
      kernels::linear_f32(m, in, out, x.data<float>(), w.data<float>(),
                          b.defined() ? b.data<float>() : nullptr, yp);
      return;
    }
  }
  if (b.defined()) {
    const T* bp = b.data<T>();
    for (int64_t r = 0; r < m; ++r) std::copy(bp, bp + out, yp + r * out);
  }
  kernels::gemm(false, false, m, out, in, T(1), x.data<T>(), in, w.data<T>(), out, b.defined() ? T(1) : T(0),
                yp, out);
}

template <typename T>
std::vector<Tensor> linear_backward(const Tensor& g, const Tensor& x, const Tensor& w, int64_t m,
                                    const std::vector<bool>& needs) {
  const int64_t in = w.size(0), out = w.size(1);
  std::vector<Tensor> grads(3);
  const T* gp = g.data<T>();
  if (needs[0]) {
    grads[0] = Tensor::uninitialized(x.shape(), x.dtype());
    kernels::gemm(false, true, m, in, out, T(1), gp, out, w.data<T>(), out, T(0), grads[0].data<T>(), in);
  }
  if (needs[1]) {
    grads[1] = Tensor::uninitialized(w.shape(), w.dtype());
    kernels::gemm(true, false, in, out, m, T(1), x.data<T>(), in, gp, out, T(0), grads[1].data<T>(), out);
  }
  if (needs[2]) {
    grads[2] = Tensor::zeros({out}, w.dtype());
    T* db = grads[2].data<T>();
    for (int64_t r = 0; r < m; ++r) {
      for (int64_t j = 0; j < out; ++j) db[j] += gp[r * out + j];
    }
  }
  return grads;
}

}  // namespace

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  kernels::check_floating(x, "linear");
  CREW_CHECK(weight.dim() == 2, "linear: weight must be [in, out], got shape ", shape_str(weight.shape()));
  CREW_CHECK(x.dim() >= 1 && x.size(-1) == weight.size(0), "linear: input ", shape_str(x.shape()),
             " does not match weight [in, out] = ", shape_str(weight.shape()));
  CREW_CHECK(x.dtype() == weight.dtype(), "linear: input dtype ", dtype_name(x.dtype()), " vs weight ",
             dtype_name(weight.dtype()));
  if (bias.defined()) {
    CREW_CHECK(bias.numel() == weight.size(1) && bias.dtype() == weight.dtype(), "linear: bias ",
               shape_str(bias.shape()), " does not match out features ", weight.size(1));
  }
  const int64_t m = x.numel() / weight.size(0);
  Shape out_shape = x.shape();
  out_shape.back() = weight.size(1);
  Tensor y = Tensor::uninitialized(out_shape, x.dtype());
  if (x.dtype() == DType::FLOAT32) {
    linear_forward<float>(x, weight, bias, y, m);
  } else {
    linear_forward<double>(x, weight, bias, y, m);
  }
  if (autograd::should_record({&x, &weight, &bias})) {
    autograd::record(y, "linear", {x, weight, bias},
                     [x, weight, m](const Tensor& g, const std::vector<bool>& needs) {
                       if (g.dtype() == DType::FLOAT32) return linear_backward<float>(g, x, weight, m, needs);
                       return linear_backward<double>(g, x, weight, m, needs);
                     },
                     {x, weight});
  }
  return y;
}

}  // namespace crew::nn::functional
