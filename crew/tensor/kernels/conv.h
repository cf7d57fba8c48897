#pragma once
// 2-d convolution kernels on oneDNN (float32, NCHW), primitives cached per configuration.
// These are plain kernels without autograd; crew::nn::functional::conv2d wraps them.
#include <array>
#include <cstdint>
#include <memory>
#include <tuple>

#include "crew/tensor/kernels/dispatch.h"
#include "crew/tensor/tensor.h"

namespace crew::kernels {

struct Conv2dParams {
  std::array<int64_t, 2> stride{1, 1};
  std::array<int64_t, 2> padding{0, 0};   // symmetric, per spatial axis
  std::array<int64_t, 2> dilation{1, 1};  // 1 = dense (Paddle's convention)
  int64_t groups = 1;
  // The weight is a parameter updated in place between steps (a leaf that requires grad):
  // forward may convert it in place into its primitive's blocked layout (detail::adopt_layout),
  // so that later steps read it without a reorder, and the weight gradient is then returned in
  // that layout too. CREW_WEIGHT_LAYOUT=0 turns this off.
  bool keep_weight_layout = false;
};

// Validates x [N, C, H, W] and weight [O, C/groups, kh, kw]; returns [N, O, H', W'].
Shape conv2d_output_shape(const Shape& x, const Shape& weight, const Conv2dParams& p);
// What conv2d_forward keeps for conv2d_backward (opaque; see conv.cpp).
struct Conv2dSaved;

// y = conv(x, weight) + bias; bias [O] or undefined. With `saved`, also returns state that lets
// conv2d_backward skip work already done here (the input's layout change). Operands on one
// place; runs that place's entry of conv2d_forward_kernel.
Tensor conv2d_forward(const Tensor& x, const Tensor& weight, const Tensor& bias, const Conv2dParams& p,
                      std::shared_ptr<const Conv2dSaved>* saved = nullptr);
using Conv2dForwardFn = Tensor(const Tensor& x, const Tensor& weight, const Tensor& bias,
                               const Conv2dParams& p, std::shared_ptr<const Conv2dSaved>* saved);
extern KernelSlot<Conv2dForwardFn> conv2d_forward_kernel;

// Which gradients conv2d_backward computes.
struct Conv2dNeeds {
  bool data = true;     // d loss / d x
  bool weights = true;  // d loss / d weight
  bool bias = true;     // d loss / d bias (with weights only)
};
struct Conv2dGrads {
  Tensor grad_x, grad_weight, grad_bias;  // undefined where not asked for
};
// Caller-provided outputs for the weight pass (overwritten; grad_bias may be undefined).
struct Conv2dGradOutputs {
  Tensor grad_weight, grad_bias;
};
// Both backward passes of one convolution for grad_y [N, O, H', W']. x is needed for the weight
// pass, weight for the data pass (the other may be undefined). The two passes share the layout
// change of grad_y when their kernels want the same layout, and `saved` (from conv2d_forward)
// spares the weight pass the input's. `into` supplies the weight pass's outputs.
Conv2dGrads conv2d_backward(const Tensor& grad_y, const Tensor& x, const Tensor& weight, const Shape& x_shape,
                            const Conv2dParams& p, Conv2dNeeds needs = {},
                            const std::shared_ptr<const Conv2dSaved>& saved = nullptr,
                            const Conv2dGradOutputs* into = nullptr);
// The slot conv2d_backward runs, on the operands' place: (grad_x, grad_weight, grad_bias);
// into_weight / into_bias are the weight pass's outputs when into_weight is defined.
using Conv2dBackwardFn = std::tuple<Tensor, Tensor, Tensor>(const Tensor& grad_y, const Tensor& x,
                                                            const Tensor& weight, const Shape& x_shape,
                                                            const Conv2dParams& p, Conv2dNeeds needs,
                                                            const std::shared_ptr<const Conv2dSaved>& saved,
                                                            const Tensor& into_weight,
                                                            const Tensor& into_bias);
extern KernelSlot<Conv2dBackwardFn> conv2d_backward_kernel;

// The two passes alone. d loss / d x:
Tensor conv2d_backward_data(const Tensor& grad_y, const Tensor& weight, const Shape& x_shape,
                            const Conv2dParams& p);
// d loss / d weight into grad_weight (same shape as weight) and, when grad_bias is defined,
// d loss / d bias into grad_bias [O]. Both are overwritten.
void conv2d_backward_weights(const Tensor& grad_y, const Tensor& x, const Conv2dParams& p,
                             const Tensor& grad_weight, const Tensor& grad_bias);

}  // namespace crew::kernels
