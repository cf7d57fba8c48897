#include "crew/tensor/kernels/image.h"

#include <type_traits>

namespace crew::kernels {
namespace {

void hwc_to_chw_cpu(const Tensor& image, const Tensor& out, bool bytes_to_unit) {
  const int64_t h = image.size(0), w = image.size(1), c = image.dim() == 3 ? image.size(2) : 1;
  dispatch_dtype(image.dtype(), [&](auto in_tag) {
    using In = decltype(in_tag);
    const In* src = image.data<In>();
    dispatch_dtype(out.dtype(), [&](auto out_tag) {
      using Out = decltype(out_tag);
      if constexpr (std::is_floating_point_v<Out>) {
        Out* dst = out.data<Out>();
        const Out scale = bytes_to_unit ? Out(1) / Out(255) : Out(1);
        if (c == 1) {  // grey: HW and CHW are the same order, one vectorisable pass
          for (int64_t i = 0; i < h * w; ++i) dst[i] = static_cast<Out>(src[i]) * scale;
          return;
        }
        for (int64_t y = 0; y < h; ++y) {
          for (int64_t x = 0; x < w; ++x) {
            const In* px = src + (y * w + x) * c;
            for (int64_t k = 0; k < c; ++k) dst[(k * h + y) * w + x] = static_cast<Out>(px[k]) * scale;
          }
        }
      }
    });
  });
}

void normalize_channels_cpu(const Tensor& image, const Tensor& out, const std::vector<float>& mean,
                            const std::vector<float>& std) {
  const int64_t c = image.size(0), plane = image.size(1) * image.size(2);
  dispatch_dtype(image.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T>) {
      const T* src = image.data<T>();
      T* dst = out.data<T>();
      for (int64_t k = 0; k < c; ++k) {
        const size_t m = mean.size() == 1 ? 0 : static_cast<size_t>(k);
        const T mu = mean[m], inv = T(1) / T(std[m]);
        for (int64_t i = 0; i < plane; ++i) dst[k * plane + i] = (src[k * plane + i] - mu) * inv;
      }
    }
  });
}

void crop_cpu(const Tensor& image, const ImageAxes& in, const Tensor& out, const ImageAxes& o, int64_t top,
              int64_t left, double fill) {
  dispatch_dtype(image.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* src = image.data<T>();
    T* dst = out.data<T>();
    const T value = static_cast<T>(fill);
    for (int64_t c = 0; c < o.channels; ++c) {
      for (int64_t y = 0; y < o.height; ++y) {
        const int64_t sy = top + y;
        for (int64_t x = 0; x < o.width; ++x) {
          const int64_t sx = left + x;
          const bool inside = sy >= 0 && sy < in.height && sx >= 0 && sx < in.width;
          dst[c * o.c_stride + y * o.y_stride + x * o.x_stride] =
              inside ? src[c * in.c_stride + sy * in.y_stride + sx * in.x_stride] : value;
        }
      }
    }
  });
}

template <bool kHeight>
void flip_cpu(const Tensor& image, const Tensor& out, const ImageAxes& l) {
  dispatch_dtype(image.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* src = image.data<T>();
    T* dst = out.data<T>();
    for (int64_t c = 0; c < l.channels; ++c)
      for (int64_t y = 0; y < l.height; ++y)
        for (int64_t x = 0; x < l.width; ++x) {
          const int64_t sy = kHeight ? l.height - 1 - y : y, sx = kHeight ? x : l.width - 1 - x;
          dst[c * l.c_stride + y * l.y_stride + x * l.x_stride] =
              src[c * l.c_stride + sy * l.y_stride + sx * l.x_stride];
        }
  });
}

}  // namespace

constinit KernelSlot<HwcToChwFn> hwc_to_chw_kernel("hwc_to_chw", &hwc_to_chw_cpu);
constinit KernelSlot<NormalizeChannelsFn> normalize_channels_kernel("normalize_channels", &normalize_channels_cpu);
constinit KernelSlot<CropFn> crop_kernel("crop", &crop_cpu);
constinit KernelSlot<FlipWidthFn> flip_width_kernel("flip_width", &flip_cpu<false>);
constinit KernelSlot<FlipWidthFn> flip_height_kernel("flip_height", &flip_cpu<true>);

void hwc_to_chw(const Tensor& image, const Tensor& out, bool bytes_to_unit) {
  check_same_place("hwc_to_chw", {{"image", &image}, {"out", &out}});
  hwc_to_chw_kernel.get(image.place().type)(image, out, bytes_to_unit);
}

void normalize_channels(const Tensor& image, const Tensor& out, const std::vector<float>& mean,
                        const std::vector<float>& std) {
  check_same_place("normalize_channels", {{"image", &image}, {"out", &out}});
  normalize_channels_kernel.get(image.place().type)(image, out, mean, std);
}

void crop(const Tensor& image, const ImageAxes& in, const Tensor& out, const ImageAxes& out_axes, int64_t top,
          int64_t left, double fill) {
  check_same_place("crop", {{"image", &image}, {"out", &out}});
  crop_kernel.get(image.place().type)(image, in, out, out_axes, top, left, fill);
}

void flip_width(const Tensor& image, const Tensor& out, const ImageAxes& axes) {
  check_same_place("flip_width", {{"image", &image}, {"out", &out}});
  flip_width_kernel.get(image.place().type)(image, out, axes);
}

void flip_height(const Tensor& image, const Tensor& out, const ImageAxes& axes) {
  check_same_place("flip_height", {{"image", &image}, {"out", &out}});
  flip_height_kernel.get(image.place().type)(image, out, axes);
}

}  // namespace crew::kernels
