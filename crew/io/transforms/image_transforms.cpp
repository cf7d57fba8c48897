#include "crew/io/transforms/image_transforms.h"

#include "crew/core/check.h"

namespace crew::io {

Tensor ToTensor::operator()(const Tensor& image) const {
  CREW_CHECK(image.defined() && (image.dim() == 2 || image.dim() == 3),
             "ToTensor: expected an image of shape [H, W] or [H, W, C], got ",
             image.defined() ? shape_str(image.shape()) : std::string("undefined"));
  const int64_t h = image.size(0), w = image.size(1), c = image.dim() == 3 ? image.size(2) : 1;
  Tensor out = Tensor::uninitialized({c, h, w}, image.dtype() == DType::FLOAT64 ? DType::FLOAT64 : DType::FLOAT32);
  dispatch_dtype(image.dtype(), [&](auto in_tag) {
    using In = decltype(in_tag);
    const In* src = image.data<In>();
    dispatch_dtype(out.dtype(), [&](auto out_tag) {
      using Out = decltype(out_tag);
      if constexpr (std::is_floating_point_v<Out>) {
        Out* dst = out.data<Out>();
        const Out scale = image.dtype() == DType::UINT8 ? Out(1) / Out(255) : Out(1);
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
  return out;
}

Normalize::Normalize(std::vector<float> mean, std::vector<float> std) : mean_(std::move(mean)), std_(std::move(std)) {
  CREW_CHECK(!mean_.empty() && mean_.size() == std_.size(), "Normalize: mean and std need the same, non-zero length, got ",
             mean_.size(), " and ", std_.size());
  for (float s : std_) CREW_CHECK(s != 0.0f, "Normalize: std must be non-zero");
}

Tensor Normalize::operator()(const Tensor& image) const {
  CREW_CHECK(image.defined() && image.dim() == 3 && is_floating(image.dtype()),
             "Normalize: expected a floating [C, H, W] image (apply ToTensor first), got ",
             image.defined() ? shape_str(image.shape()) + " " + dtype_name(image.dtype()) : std::string("undefined"));
  const int64_t c = image.size(0), plane = image.size(1) * image.size(2);
  CREW_CHECK(mean_.size() == 1 || static_cast<int64_t>(mean_.size()) == c, "Normalize: ", mean_.size(),
             " means/stds for an image with ", c, " channels");
  Tensor out = Tensor::empty(image.shape(), image.dtype());
  dispatch_dtype(image.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T>) {
      const T* src = image.data<T>();
      T* dst = out.data<T>();
      for (int64_t k = 0; k < c; ++k) {
        const size_t m = mean_.size() == 1 ? 0 : static_cast<size_t>(k);
        const T mean = mean_[m], inv = T(1) / T(std_[m]);
        for (int64_t i = 0; i < plane; ++i) dst[k * plane + i] = (src[k * plane + i] - mean) * inv;
      }
    }
  });
  return out;
}

}  // namespace crew::io
