#pragma once
// The kernels of io's image transforms: HWC bytes to CHW floats, per-channel normalisation,
// crop with padding, horizontal and vertical flip. Images are described by their three axes' strides, so
// one kernel serves HW, HWC and CHW images. A device backend sets its entries
// (crew/tensor/kernels/dispatch.h).
#include <cstdint>
#include <vector>

#include "crew/tensor/kernels/dispatch.h"
#include "crew/tensor/tensor.h"

namespace crew::kernels {

// An image's channel, row and column axes: extents and strides in elements.
struct ImageAxes {
  int64_t channels = 1, height = 0, width = 0;
  int64_t c_stride = 0, y_stride = 0, x_stride = 0;
};

// image [H, W] or [H, W, C] (any dtype) -> out [C, H, W] (floating), times 1/255 when
// `bytes_to_unit` (uint8 images), else unchanged.
using HwcToChwFn = void(const Tensor& image, const Tensor& out, bool bytes_to_unit);
// out[c] = (image[c] - mean[c]) / std[c] over a floating [C, H, W] image; one mean/std for
// every channel when the vectors have one element.
using NormalizeChannelsFn = void(const Tensor& image, const Tensor& out, const std::vector<float>& mean,
                                 const std::vector<float>& std);
// out(c, y, x) = image(c, y + top, x + left) where that is inside the image, else `fill`.
using CropFn = void(const Tensor& image, const ImageAxes& in, const Tensor& out, const ImageAxes& out_axes,
                    int64_t top, int64_t left, double fill);
// out(c, y, x) = image(c, y, width - 1 - x); flip_height: image(c, height - 1 - y, x).
using FlipWidthFn = void(const Tensor& image, const Tensor& out, const ImageAxes& axes);

// Each checks that the tensors share one place and runs that place's entry.
void hwc_to_chw(const Tensor& image, const Tensor& out, bool bytes_to_unit);
void normalize_channels(const Tensor& image, const Tensor& out, const std::vector<float>& mean,
                        const std::vector<float>& std);
void crop(const Tensor& image, const ImageAxes& in, const Tensor& out, const ImageAxes& out_axes, int64_t top,
          int64_t left, double fill);
void flip_width(const Tensor& image, const Tensor& out, const ImageAxes& axes);
void flip_height(const Tensor& image, const Tensor& out, const ImageAxes& axes);

extern KernelSlot<HwcToChwFn> hwc_to_chw_kernel;
extern KernelSlot<NormalizeChannelsFn> normalize_channels_kernel;
extern KernelSlot<CropFn> crop_kernel;
extern KernelSlot<FlipWidthFn> flip_width_kernel;
extern KernelSlot<FlipWidthFn> flip_height_kernel;

}  // namespace crew::kernels
