#include "crew/tensor/kernels/adaptive_pool.h"

#include <type_traits>

#include "crew/tensor/half.h"
#include "crew/tensor/kernels/threading.h"

namespace crew::kernels {
namespace {

struct Bin {
  int64_t begin, end;
};

// 16-bit planes are summed in float32 and rounded once per output (per bin share backward).
template <typename T>
using Acc = std::conditional_t<is_half_v<T>, float, T>;

template <typename T>
constexpr bool poolable_v = std::is_floating_point_v<T> || is_half_v<T>;

Bin bin_of(int64_t i, int64_t in, int64_t out) { return {i * in / out, ((i + 1) * in + out - 1) / out}; }

// Calls f(oh, ow, row bin, col bin) for each output cell of one plane.
template <typename F>
void for_each_cell(int64_t h, int64_t w, int64_t oh, int64_t ow, F f) {
  for (int64_t i = 0; i < oh; ++i) {
    const Bin r = bin_of(i, h, oh);
    for (int64_t j = 0; j < ow; ++j) f(i, j, r, bin_of(j, w, ow));
  }
}

template <typename T>
void pool_forward(const T* x, T* y, int64_t planes, int64_t h, int64_t w, int64_t oh, int64_t ow) {
  crew::detail::parallel_for(planes, 8, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      const T* xp = x + p * h * w;
      for_each_cell(h, w, oh, ow, [&](int64_t i, int64_t j, Bin r, Bin c) {
        Acc<T> acc = 0;
        for (int64_t a = r.begin; a < r.end; ++a)
          for (int64_t b = c.begin; b < c.end; ++b) acc += element_cast<Acc<T>>(xp[a * w + b]);
        y[(p * oh + i) * ow + j] =
            element_cast<T>(acc / static_cast<Acc<T>>((r.end - r.begin) * (c.end - c.begin)));
      });
    }
  });
}

template <typename T>
void pool_backward(const T* g, T* gx, int64_t planes, int64_t h, int64_t w, int64_t oh, int64_t ow) {
  crew::detail::parallel_for(planes, 8, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      T* gp = gx + p * h * w;
      for_each_cell(h, w, oh, ow, [&](int64_t i, int64_t j, Bin r, Bin c) {
        const Acc<T> share = element_cast<Acc<T>>(g[(p * oh + i) * ow + j]) /
                             static_cast<Acc<T>>((r.end - r.begin) * (c.end - c.begin));
        for (int64_t a = r.begin; a < r.end; ++a)
          for (int64_t b = c.begin; b < c.end; ++b)
            gp[a * w + b] = element_cast<T>(element_cast<Acc<T>>(gp[a * w + b]) + share);
      });
    }
  });
}

Tensor forward_cpu(const Tensor& x, int64_t oh, int64_t ow) {
  const int64_t n = x.size(0), c = x.size(1), h = x.size(2), w = x.size(3);
  Tensor y = Tensor::uninitialized({n, c, oh, ow}, x.dtype());
  dispatch_storage_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (poolable_v<T>) pool_forward(x.data<T>(), y.data<T>(), n * c, h, w, oh, ow);
  });
  return y;
}

Tensor backward_cpu(const Tensor& g, const Shape& in) {
  Tensor gx = Tensor::zeros(in, g.dtype());
  const int64_t oh = g.size(2), ow = g.size(3);
  dispatch_storage_dtype(g.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (poolable_v<T>) {
      pool_backward(g.data<T>(), gx.data<T>(), in[0] * in[1], in[2], in[3], oh, ow);
    }
  });
  return gx;
}

}  // namespace

constinit KernelSlot<AdaptiveAvgPool2dForwardFn> adaptive_avg_pool2d_forward_kernel(
    "adaptive_avg_pool2d_forward", &forward_cpu);
constinit KernelSlot<AdaptiveAvgPool2dBackwardFn> adaptive_avg_pool2d_backward_kernel(
    "adaptive_avg_pool2d_backward", &backward_cpu);

Tensor adaptive_avg_pool2d_forward(const Tensor& x, int64_t oh, int64_t ow) {
  return adaptive_avg_pool2d_forward_kernel.get(x.place().type)(x, oh, ow);
}

Tensor adaptive_avg_pool2d_backward(const Tensor& grad_y, const Shape& x_shape) {
  return adaptive_avg_pool2d_backward_kernel.get(grad_y.place().type)(grad_y, x_shape);
}

}  // namespace crew::kernels
