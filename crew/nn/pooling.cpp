#include "crew/nn/pooling.h"

#include "crew/core/check.h"

namespace crew::nn {
namespace {

// Validates the window and resolves stride 0 to the kernel size.
Size2 checked_stride(const char* op, Size2 kernel, Size2 stride, Size2 padding) {
  CREW_CHECK(kernel.h > 0 && kernel.w > 0, op, ": kernel_size must be positive, got ", kernel.str());
  CREW_CHECK(stride.h >= 0 && stride.w >= 0, op, ": stride must be >= 0, got ", stride.str());
  CREW_CHECK(padding.h >= 0 && padding.w >= 0 && padding.h * 2 <= kernel.h && padding.w * 2 <= kernel.w, op,
             ": padding ", padding.str(), " must be in [0, kernel/2] for kernel ", kernel.str());
  return Size2(stride.h == 0 ? kernel.h : stride.h, stride.w == 0 ? kernel.w : stride.w);
}

void check_input(const Layer& layer, const Tensor& x) {
  CREW_CHECK(x.dim() == 4, layer.full_name(), ": expected input [N, C, H, W], got ", shape_str(x.shape()));
}

}  // namespace

MaxPool2D::MaxPool2D(Size2 kernel_size, Size2 stride, Size2 padding)
    : Layer("max_pool2d"),
      kernel_(kernel_size),
      stride_(checked_stride("MaxPool2D", kernel_size, stride, padding)),
      padding_(padding) {}

Tensor MaxPool2D::forward(const Tensor& x) {
  check_input(*this, x);
  return functional::max_pool2d(x, kernel_.pair(), stride_.pair(), padding_.pair());
}

AvgPool2D::AvgPool2D(Size2 kernel_size, Size2 stride, Size2 padding)
    : Layer("avg_pool2d"),
      kernel_(kernel_size),
      stride_(checked_stride("AvgPool2D", kernel_size, stride, padding)),
      padding_(padding) {}

Tensor AvgPool2D::forward(const Tensor& x) {
  check_input(*this, x);
  return functional::avg_pool2d(x, kernel_.pair(), stride_.pair(), padding_.pair());
}

}  // namespace crew::nn
