#pragma once
// Conv2D: Paddle's nn.Conv2D. x [N, C_in, H, W] -> [N, C_out, H', W'] with
// H' = (H + 2*pad_h - dil_h*(k_h-1) - 1) / stride_h + 1 (likewise W').
//
//   Conv2D conv(3, 32, 3);                                    // 3x3, stride 1, no padding
//   Conv2D same(32, 64, 3, {.stride = 1, .padding = 1});
#include <cstdint>

#include "crew/nn/layer.h"
#include "crew/nn/size2.h"

namespace crew::nn {

struct Conv2DOptions {
  Size2 stride = 1;
  Size2 padding = 0;
  Size2 dilation = 1;
  int64_t groups = 1;
  bool bias = true;
};

class Conv2D : public Layer {
 public:
  // Parameters: weight [out, in/groups, k_h, k_w] and bias [out] (unless options.bias is false).
  // Initialised as Paddle does by default: weight ~ Normal(0, sqrt(2 / (in * k_h * k_w)))
  // (Paddle's _ConvNd default, a Kaiming-normal for ReLU nets, computed from in_channels,
  // not in_channels/groups, exactly like Paddle), bias = 0.
  Conv2D(int64_t in_channels, int64_t out_channels, Size2 kernel_size, Conv2DOptions options = {});

  Tensor forward(const Tensor& x) override;

  Tensor weight() const { return weight_; }
  Tensor bias() const { return bias_; }  // undefined without bias
  int64_t in_channels() const { return in_channels_; }
  int64_t out_channels() const { return out_channels_; }
  Size2 kernel_size() const { return kernel_; }
  const Conv2DOptions& options() const { return options_; }

 private:
  int64_t in_channels_;
  int64_t out_channels_;
  Size2 kernel_;
  Conv2DOptions options_;
  Tensor weight_;
  Tensor bias_;
};

}  // namespace crew::nn
