#include "crew/io/transforms/image_transforms.h"

#include "crew/core/check.h"
#include "crew/tensor/kernels/image.h"

namespace crew::io {

Tensor ToTensor::operator()(const Tensor& image) const {
  CREW_CHECK(image.defined() && (image.dim() == 2 || image.dim() == 3),
             "ToTensor: expected an image of shape [H, W] or [H, W, C], got ",
             image.defined() ? shape_str(image.shape()) : std::string("undefined"));
  const int64_t h = image.size(0), w = image.size(1), c = image.dim() == 3 ? image.size(2) : 1;
  Tensor out = Tensor::uninitialized({c, h, w}, image.dtype() == DType::FLOAT64 ? DType::FLOAT64 : DType::FLOAT32,
                                     image.place());
  kernels::hwc_to_chw(image, out, image.dtype() == DType::UINT8);
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
  Tensor out = Tensor::empty(image.shape(), image.dtype(), image.place());
  kernels::normalize_channels(image, out, mean_, std_);
  return out;
}

}  // namespace crew::io
