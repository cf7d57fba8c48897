// adaptive_avg_pool2d: Paddle's/PyTorch's bins, start = floor(i * H / out), end =
// ceil((i + 1) * H / out); a 1x1 output is a plain mean over each plane.
#include "crew/autograd/function.h"
#include "crew/nn/functional.h"
#include "crew/tensor/kernels/broadcast.h"
#include "crew/tensor/kernels/threading.h"

namespace crew::nn::functional {
namespace {

struct Bin {
  int64_t begin, end;
};

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
        T acc = 0;
        for (int64_t a = r.begin; a < r.end; ++a)
          for (int64_t b = c.begin; b < c.end; ++b) acc += xp[a * w + b];
        y[(p * oh + i) * ow + j] = acc / static_cast<T>((r.end - r.begin) * (c.end - c.begin));
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
        const T share = g[(p * oh + i) * ow + j] / static_cast<T>((r.end - r.begin) * (c.end - c.begin));
        for (int64_t a = r.begin; a < r.end; ++a)
          for (int64_t b = c.begin; b < c.end; ++b) gp[a * w + b] += share;
      });
    }
  });
}

}  // namespace

Tensor adaptive_avg_pool2d(const Tensor& x, Pair output_size) {
  kernels::check_floating(x, "adaptive_avg_pool2d");
  CREW_CHECK(x.dim() == 4, "adaptive_avg_pool2d: expected x [N, C, H, W], got ", shape_str(x.shape()));
  const int64_t oh = output_size[0], ow = output_size[1];
  CREW_CHECK(oh > 0 && ow > 0, "adaptive_avg_pool2d: output_size must be positive, got (", oh, ", ", ow, ")");
  const int64_t n = x.size(0), c = x.size(1), h = x.size(2), w = x.size(3);
  CREW_CHECK(h > 0 && w > 0, "adaptive_avg_pool2d: empty plane in ", shape_str(x.shape()));
  Tensor y = Tensor::uninitialized({n, c, oh, ow}, x.dtype());
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T>) pool_forward(x.data<T>(), y.data<T>(), n * c, h, w, oh, ow);
  });
  if (autograd::should_record({&x})) {
    autograd::record(y, "adaptive_avg_pool2d", {x},
                     [in = x.shape(), oh, ow](const Tensor& g, const std::vector<bool>&) {
                       Tensor gx = Tensor::zeros(in, g.dtype());
                       dispatch_dtype(g.dtype(), [&](auto tag) {
                         using T = decltype(tag);
                         if constexpr (std::is_floating_point_v<T>) {
                           pool_backward(g.data<T>(), gx.data<T>(), in[0] * in[1], in[2], in[3], oh, ow);
                         }
                       });
                       return std::vector<Tensor>{gx};
                     });
  }
  return y;
}

}  // namespace crew::nn::functional
