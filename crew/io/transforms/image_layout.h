#pragma once
// How an image tensor is laid out, following Paddle's convention: uint8 images are HW or
// HWC (as decoded files), floating images are CHW (as after ToTensor).
#include <cstdint>

#include "crew/tensor/kernels/image.h"
#include "crew/tensor/tensor.h"

namespace crew::io::detail {

// The image kernels' axes (extents, strides in elements) and what they mean to a transform.
struct ImageLayout : kernels::ImageAxes {
  bool hwc = false;   // HW or HWC (uint8) rather than CHW
  bool has_c = true;  // false for a 2-d HW image

  // Shape of an image of this layout with other spatial extents.
  Shape shape(int64_t height, int64_t width) const;
  ImageLayout resized(int64_t height, int64_t width) const;
};

// Throws ValueError naming `op` for a tensor that is not an image.
ImageLayout image_layout(const Tensor& image, const char* op);

}  // namespace crew::io::detail
