#include "crew/nn/conv.h"

#include <cmath>

#include "crew/core/check.h"
#include "crew/nn/init.h"

namespace crew::nn {

Conv2D::Conv2D(int64_t in_channels, int64_t out_channels, Size2 kernel_size, Conv2DOptions options)
    : Layer("conv2d"),
      in_channels_(in_channels),
      out_channels_(out_channels),
      kernel_(kernel_size),
      options_(options) {
  CREW_CHECK(in_channels > 0 && out_channels > 0, "Conv2D: channels must be positive, got in=", in_channels,
             " out=", out_channels);
  CREW_CHECK(kernel_.h > 0 && kernel_.w > 0, "Conv2D: kernel_size must be positive, got ", kernel_.str());
  CREW_CHECK(options.stride.h > 0 && options.stride.w > 0, "Conv2D: stride must be positive, got ",
             options.stride.str());
  CREW_CHECK(options.padding.h >= 0 && options.padding.w >= 0, "Conv2D: padding must be >= 0, got ",
             options.padding.str());
  CREW_CHECK(options.dilation.h > 0 && options.dilation.w > 0, "Conv2D: dilation must be positive, got ",
             options.dilation.str());
  CREW_CHECK(options.groups > 0 && in_channels % options.groups == 0 && out_channels % options.groups == 0,
             "Conv2D: groups ", options.groups, " must divide in_channels ", in_channels,
             " and out_channels ", out_channels);
  Tensor w = Tensor::empty({out_channels, in_channels / options.groups, kernel_.h, kernel_.w});
  double fan_in = static_cast<double>(in_channels * kernel_.h * kernel_.w);
  init::normal_(w, 0.0, std::sqrt(2.0 / fan_in));
  weight_ = register_parameter("weight", w);
  if (options.bias) bias_ = register_parameter("bias", Tensor::zeros({out_channels}));
}

Tensor Conv2D::forward(const Tensor& x) {
  CREW_CHECK(x.dim() == 4 && x.size(1) == in_channels_, full_name(), ": expected input [N, ", in_channels_,
             ", H, W], got ", shape_str(x.shape()));
  return functional::conv2d(x, weight_, bias_, options_.stride.pair(), options_.padding.pair(),
                            options_.dilation.pair(), options_.groups);
}

}  // namespace crew::nn
