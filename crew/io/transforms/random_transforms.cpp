#include "crew/io/transforms/random_transforms.h"

#include "crew/core/check.h"
#include "crew/io/transforms/image_layout.h"

namespace crew::io {

RandomCrop::RandomCrop(int64_t height, int64_t width, int64_t padding, double fill, std::optional<uint64_t> seed)
    : RandomTransform(seed), height_(height), width_(width), padding_(padding), fill_(fill) {
  CREW_CHECK(height > 0 && width > 0, "RandomCrop: size must be positive, got ", height, "x", width);
  CREW_CHECK(padding >= 0, "RandomCrop: padding must be >= 0, got ", padding);
}

Tensor RandomCrop::operator()(const Tensor& image) const {
  const detail::ImageLayout in = detail::image_layout(image, "RandomCrop");
  const int64_t ph = in.height + 2 * padding_, pw = in.width + 2 * padding_;
  CREW_CHECK(height_ <= ph && width_ <= pw, "RandomCrop: crop ", height_, "x", width_,
             " is larger than the padded image ", ph, "x", pw);
  Generator& gen = generator();
  // Top-left corner in padded coordinates, uniform over all valid positions.
  const int64_t top = static_cast<int64_t>(gen.next_u64() % static_cast<uint64_t>(ph - height_ + 1));
  const int64_t left = static_cast<int64_t>(gen.next_u64() % static_cast<uint64_t>(pw - width_ + 1));
  const detail::ImageLayout out_l = in.resized(height_, width_);
  Tensor out = Tensor::empty(out_l.shape(height_, width_), image.dtype());
  dispatch_dtype(image.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* src = image.data<T>();
    T* dst = out.data<T>();
    const T fill = static_cast<T>(fill_);
    for (int64_t c = 0; c < in.channels; ++c) {
      for (int64_t y = 0; y < height_; ++y) {
        const int64_t sy = top + y - padding_;
        for (int64_t x = 0; x < width_; ++x) {
          const int64_t sx = left + x - padding_;
          const bool inside = sy >= 0 && sy < in.height && sx >= 0 && sx < in.width;
          dst[c * out_l.c_stride + y * out_l.y_stride + x * out_l.x_stride] =
              inside ? src[c * in.c_stride + sy * in.y_stride + sx * in.x_stride] : fill;
        }
      }
    }
  });
  return out;
}

RandomHorizontalFlip::RandomHorizontalFlip(double p, std::optional<uint64_t> seed) : RandomTransform(seed), p_(p) {
  CREW_CHECK(p >= 0.0 && p <= 1.0, "RandomHorizontalFlip: p must be in [0, 1], got ", p);
}

Tensor RandomHorizontalFlip::operator()(const Tensor& image) const {
  const detail::ImageLayout l = detail::image_layout(image, "RandomHorizontalFlip");
  if (!(generator().uniform() < p_)) return image;
  Tensor out = Tensor::empty(image.shape(), image.dtype());
  dispatch_dtype(image.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* src = image.data<T>();
    T* dst = out.data<T>();
    for (int64_t c = 0; c < l.channels; ++c)
      for (int64_t y = 0; y < l.height; ++y)
        for (int64_t x = 0; x < l.width; ++x)
          dst[c * l.c_stride + y * l.y_stride + x * l.x_stride] =
              src[c * l.c_stride + y * l.y_stride + (l.width - 1 - x) * l.x_stride];
  });
  return out;
}

}  // namespace crew::io
