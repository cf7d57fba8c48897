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

}  // namespace

Pool2D::Pool2D(const char* name_scope, const char* op, Size2 kernel_size, Size2 stride, Size2 padding)
    : Layer(name_scope),
      kernel_(kernel_size),
      stride_(checked_stride(op, kernel_size, stride, padding)),
      padding_(padding) {}

void Pool2D::check_input(const Tensor& x) const {
  CREW_CHECK(x.dim() == 4, full_name(), ": expected input [N, C, H, W], got ", shape_str(x.shape()));
}

MaxPool2D::MaxPool2D(Size2 kernel_size, Size2 stride, Size2 padding)
    : Pool2D("max_pool2d", "MaxPool2D", kernel_size, stride, padding) {}

Tensor MaxPool2D::forward(const Tensor& x) {
  check_input(x);
  return functional::max_pool2d(x, kernel_.pair(), stride_.pair(), padding_.pair());
}

AvgPool2D::AvgPool2D(Size2 kernel_size, Size2 stride, Size2 padding)
    : Pool2D("avg_pool2d", "AvgPool2D", kernel_size, stride, padding) {}

Tensor AvgPool2D::forward(const Tensor& x) {
  check_input(x);
  return functional::avg_pool2d(x, kernel_.pair(), stride_.pair(), padding_.pair());
}

AdaptiveAvgPool2D::AdaptiveAvgPool2D(Size2 output_size)
    : Layer("adaptive_avg_pool2d"), output_size_(output_size) {
  CREW_CHECK(output_size.h > 0 && output_size.w > 0, "AdaptiveAvgPool2D: output_size must be positive, got ",
             output_size.str());
}

Tensor AdaptiveAvgPool2D::forward(const Tensor& x) {
  CREW_CHECK(x.dim() == 4, full_name(), ": expected input [N, C, H, W], got ", shape_str(x.shape()));
  return functional::adaptive_avg_pool2d(x, output_size_.pair());
}

}  // namespace crew::nn
