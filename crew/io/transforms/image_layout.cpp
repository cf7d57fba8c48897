#include "crew/io/transforms/image_layout.h"

#include "crew/core/check.h"

namespace crew::io::detail {
namespace {

ImageLayout make(int64_t c, int64_t h, int64_t w, bool hwc, bool has_c) {
  ImageLayout l;
  l.channels = c;
  l.height = h;
  l.width = w;
  l.hwc = hwc;
  l.has_c = has_c;
  if (hwc) {
    l.c_stride = 1;
    l.y_stride = w * c;
    l.x_stride = c;
  } else {
    l.c_stride = h * w;
    l.y_stride = w;
    l.x_stride = 1;
  }
  return l;
}

}  // namespace

Shape ImageLayout::shape(int64_t h, int64_t w) const {
  if (!has_c) return {h, w};
  return hwc ? Shape{h, w, channels} : Shape{channels, h, w};
}

ImageLayout ImageLayout::resized(int64_t h, int64_t w) const { return make(channels, h, w, hwc, has_c); }

ImageLayout image_layout(const Tensor& image, const char* op) {
  CREW_CHECK(image.defined(), op, ": image is undefined");
  const Shape& s = image.shape();
  if (image.dtype() == DType::UINT8) {
    if (s.size() == 2) return make(1, s[0], s[1], true, false);
    if (s.size() == 3) return make(s[2], s[0], s[1], true, true);
  } else {
    if (s.size() == 2) return make(1, s[0], s[1], false, false);
    if (s.size() == 3) return make(s[0], s[1], s[2], false, true);
  }
  CREW_THROW(ValueError, op, ": expected an image of shape [H, W], [H, W, C] (uint8) or [C, H, W], got ",
             shape_str(s), " ", dtype_name(image.dtype()));
}

}  // namespace crew::io::detail
