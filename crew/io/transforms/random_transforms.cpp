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
  Tensor out = Tensor::empty(out_l.shape(height_, width_), image.dtype(), image.place());
  kernels::crop(image, in, out, out_l, top - padding_, left - padding_, fill_);
  return out;
}

namespace {

void check_probability(double p, const char* op) {
  CREW_CHECK(p >= 0.0 && p <= 1.0, op, ": p must be in [0, 1], got ", p);
}

// image mirrored by `flip` with probability p (drawn from gen), else image itself.
template <typename Flip>
Tensor flip_sometimes(const Tensor& image, double p, Generator& gen, const char* op, Flip flip) {
  const detail::ImageLayout l = detail::image_layout(image, op);
  if (!(gen.uniform() < p)) return image;
  Tensor out = Tensor::empty(image.shape(), image.dtype(), image.place());
  flip(image, out, l);
  return out;
}

}  // namespace

RandomHorizontalFlip::RandomHorizontalFlip(double p, std::optional<uint64_t> seed) : RandomTransform(seed), p_(p) {
  check_probability(p, "RandomHorizontalFlip");
}

Tensor RandomHorizontalFlip::operator()(const Tensor& image) const {
  return flip_sometimes(image, p_, generator(), "RandomHorizontalFlip", &kernels::flip_width);
}

RandomVerticalFlip::RandomVerticalFlip(double p, std::optional<uint64_t> seed) : RandomTransform(seed), p_(p) {
  check_probability(p, "RandomVerticalFlip");
}

Tensor RandomVerticalFlip::operator()(const Tensor& image) const {
  return flip_sometimes(image, p_, generator(), "RandomVerticalFlip", &kernels::flip_height);
}

}  // namespace crew::io
