#pragma once
// More of Paddle's paddle.nn.functional in C++ (crew::nn::functional), kept apart from
// functional.h so that the layers including that header do not rebuild for these:
// conv2d_transpose and the parametrised activations (crew/tensor/kernels/eltwise_param.h).
#include <cstdint>

#include "crew/nn/functional.h"

namespace crew::nn::functional {

// x [N, C, H, W], weight [C, O/groups, kh, kw] (Paddle's layout), bias [O] or undefined ->
// [N, O, H', W'], H' = (H - 1) stride - 2 padding + dilation (kh - 1) + output_padding + 1;
// output_padding must be below the stride. The gradient of conv2d with respect to its input
// (oneDNN's convolution backward-data primitive, which is what its deconvolution runs); its
// backward is conv2d forward (data) and conv2d backward-weights (weight). float32.
Tensor conv2d_transpose(const Tensor& x, const Tensor& weight, const Tensor& bias, Pair stride = {1, 1},
                        Pair padding = {0, 0}, Pair output_padding = {0, 0}, Pair dilation = {1, 1},
                        int64_t groups = 1);

// x [N, C, H, W] float32 -> [N, C, out_h, out_w] on oneDNN resampling: nearest (source
// floor((o + 0.5) in / out), Paddle's rule for integer upscales) or half-pixel bilinear
// (Paddle's align_corners=False, align_mode=0); crew/tensor/kernels/resample.h.
Tensor resample2d(const Tensor& x, Pair out, bool bilinear);

// Local response normalisation across the channels of x [N, C, H, W] float32, odd size
// (Paddle's window): oneDNN lrn (crew/tensor/kernels/lrn.h).
Tensor local_response_norm(const Tensor& x, int64_t size, double alpha = 1e-4, double beta = 0.75,
                           double k = 1.0);

// Paddle's activations, float32 (oneDNN where it has them) and float64.
Tensor elu(const Tensor& x, double alpha = 1.0);
Tensor selu(const Tensor& x, double scale = 1.0507009873554804934193349852946,
            double alpha = 1.6732632423543772848170429916717);
Tensor swish(const Tensor& x);
Tensor mish(const Tensor& x);
Tensor hardsigmoid(const Tensor& x, double slope = 0.1666667, double offset = 0.5);
Tensor hardtanh(const Tensor& x, double min = -1.0, double max = 1.0);
Tensor softsign(const Tensor& x);
Tensor tanhshrink(const Tensor& x);

}  // namespace crew::nn::functional
