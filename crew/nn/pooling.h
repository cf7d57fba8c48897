#pragma once
// MaxPool2D, AvgPool2D and AdaptiveAvgPool2D: Paddle's pooling layers over x [N, C, H, W].
// stride 0 (the default) means stride = kernel_size, as in Paddle.
//
//   MaxPool2D pool(2);               // kernel 2, stride 2: [N, C, 26, 26] -> [N, C, 13, 13]
#include "crew/nn/layer.h"
#include "crew/nn/size2.h"

namespace crew::nn {

// The window both pooling layers share, checked when the layer is built.
class Pool2D : public Layer {
 public:
  Size2 kernel_size() const { return kernel_; }
  Size2 stride() const { return stride_; }  // the effective stride
  Size2 padding() const { return padding_; }

 protected:
  // `op` names the layer in errors ("MaxPool2D").
  Pool2D(const char* name_scope, const char* op, Size2 kernel_size, Size2 stride, Size2 padding);
  // ValueError unless x is [N, C, H, W].
  void check_input(const Tensor& x) const;

  Size2 kernel_, stride_, padding_;
};

class MaxPool2D : public Pool2D {
 public:
  explicit MaxPool2D(Size2 kernel_size, Size2 stride = 0, Size2 padding = 0);
  Tensor forward(const Tensor& x) override;
};

class AvgPool2D : public Pool2D {
 public:
  explicit AvgPool2D(Size2 kernel_size, Size2 stride = 0, Size2 padding = 0);
  Tensor forward(const Tensor& x) override;
};

// Paddle's nn.AdaptiveAvgPool2D: x [N, C, H, W] -> [N, C, oh, ow] with adaptive bins
// (functional::adaptive_avg_pool2d); AdaptiveAvgPool2D(1) is ResNet's global average pool.
class AdaptiveAvgPool2D : public Layer {
 public:
  explicit AdaptiveAvgPool2D(Size2 output_size);
  Tensor forward(const Tensor& x) override;
  Size2 output_size() const { return output_size_; }

 private:
  Size2 output_size_;
};

}  // namespace crew::nn
