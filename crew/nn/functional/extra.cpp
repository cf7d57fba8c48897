// conv2d_transpose (on the conv2d kernels) and the parametrised activations
// (crew/tensor/kernels/eltwise_param.h), with their graph nodes.
#include "crew/autograd/autocast.h"
#include "crew/autograd/function.h"
#include "crew/autograd/ops.h"
#include "crew/core/check.h"
#include "crew/nn/functional_extra.h"
#include "crew/tensor/kernels/conv.h"
#include "crew/tensor/kernels/eltwise_param.h"
#include "crew/tensor/kernels/lrn.h"
#include "crew/tensor/kernels/resample.h"

namespace crew::nn::functional {

Tensor conv2d_transpose(const Tensor& x, const Tensor& weight, const Tensor& bias, Pair stride, Pair padding,
                        Pair output_padding, Pair dilation, int64_t groups) {
  if (auto in = amp::autocast_operands("conv2d_transpose", x, weight, bias)) {
    return conv2d_transpose((*in)[0], (*in)[1], (*in)[2], stride, padding, output_padding, dilation, groups);
  }
  CREW_CHECK(x.dim() == 4, "conv2d_transpose: input must be 4-d NCHW, got shape ", shape_str(x.shape()));
  CREW_CHECK(weight.dim() == 4, "conv2d_transpose: weight must be 4-d [in, out/groups, kh, kw], got shape ",
             shape_str(weight.shape()));
  CREW_CHECK(groups >= 1, "conv2d_transpose: groups must be >= 1, got ", groups);
  CREW_CHECK(x.size(1) == weight.size(0), "conv2d_transpose: input has ", x.size(1), " channels but weight ",
             shape_str(weight.shape()), " expects ", weight.size(0));
  const kernels::Conv2dParams p{stride, padding, dilation, groups};
  Shape y_shape{x.size(0), weight.size(1) * groups, 0, 0};
  for (int i = 0; i < 2; ++i) {
    CREW_CHECK(stride[i] >= 1 && dilation[i] >= 1 && padding[i] >= 0, "conv2d_transpose: stride ", stride[i],
               ", dilation ", dilation[i], ", padding ", padding[i], " out of range");
    CREW_CHECK(output_padding[i] >= 0 && output_padding[i] < stride[i], "conv2d_transpose: output_padding ",
               output_padding[i], " must be in [0, stride ", stride[i], ")");
    y_shape[2 + i] = (x.size(2 + i) - 1) * stride[i] - 2 * padding[i] +
                     dilation[i] * (weight.size(2 + i) - 1) + output_padding[i] + 1;
    CREW_CHECK(y_shape[2 + i] >= 1, "conv2d_transpose: output size ", y_shape[2 + i], " < 1 for input ",
               shape_str(x.shape()), " and weight ", shape_str(weight.shape()));
  }
  // The conv2d that maps y_shape back to x's shape must exist (validates groups and channels).
  const Shape back = kernels::conv2d_output_shape(y_shape, weight.shape(), p);
  CREW_CHECK(back == x.shape(), "conv2d_transpose: input ", shape_str(x.shape()), " does not invert to ",
             shape_str(y_shape));
  Tensor y = kernels::conv2d_backward_data(x, weight, y_shape, p);
  if (autograd::should_record({&x, &weight})) {
    autograd::record(
        y, "conv2d_transpose", {x, weight},
        [x = x.detach(), weight = weight.detach(), p](const Tensor& g, const std::vector<bool>& needs) {
          Tensor gx, gw;
          if (needs[0]) gx = kernels::conv2d_forward(g, weight, Tensor(), p);
          if (needs[1]) {
            gw = Tensor::uninitialized(weight.shape(), weight.dtype());
            kernels::conv2d_backward_weights(x, g, p, gw, Tensor());
          }
          return std::vector<Tensor>{gx, gw};
        },
        {x, weight});
  }
  if (!bias.defined()) return y;
  CREW_CHECK(bias.numel() == y_shape[1], "conv2d_transpose: bias has ", bias.numel(), " elements, expected ",
             y_shape[1]);
  return add(y, reshape(bias, {1, y_shape[1], 1, 1}));
}

Tensor resample2d(const Tensor& x, Pair out, bool bilinear) {
  if (auto in = amp::autocast_operands("resample2d", x)) return resample2d((*in)[0], out, bilinear);
  const auto mode = bilinear ? kernels::ResampleMode::LINEAR : kernels::ResampleMode::NEAREST;
  Tensor y = kernels::resample2d_forward(mode, x, out);
  if (autograd::should_record({&x})) {
    autograd::record(y, bilinear ? "resample2d_bilinear" : "resample2d_nearest", {x},
                     [mode, shape = x.shape()](const Tensor& g, const std::vector<bool>&) {
                       return std::vector<Tensor>{kernels::resample2d_backward(mode, g, shape)};
                     });
  }
  return y;
}

Tensor local_response_norm(const Tensor& x, int64_t size, double alpha, double beta, double k) {
  if (auto in = amp::autocast_operands("local_response_norm", x)) {
    return local_response_norm((*in)[0], size, alpha, beta, k);
  }
  const kernels::LrnParams p{size, alpha, beta, k};
  const bool record = autograd::should_record({&x});
  kernels::LrnForwardResult r = kernels::lrn_forward(x, p);
  if (record) {
    autograd::record(r.y, "local_response_norm", {x},
                     [p, saved = x.detach(), ws = r.workspace](const Tensor& g, const std::vector<bool>&) {
                       return std::vector<Tensor>{kernels::lrn_backward(g, saved, ws, p)};
                     },
                     {x});
  }
  return r.y;
}

namespace {

Tensor eltwise(kernels::EltwiseOp op, double alpha, double beta, const char* name, const Tensor& x) {
  if (auto in = amp::autocast_operands(name, x)) return eltwise(op, alpha, beta, name, (*in)[0]);
  const kernels::EltwiseParams p{op, alpha, beta};
  Tensor y = kernels::eltwise_forward(p, x);
  if (autograd::should_record({&x})) {
    autograd::record(y, name, {x},
                     [p, saved = x.detach()](const Tensor& g, const std::vector<bool>&) {
                       return std::vector<Tensor>{kernels::eltwise_backward(p, g, saved)};
                     },
                     {x});
  }
  return y;
}

}  // namespace

Tensor elu(const Tensor& x, double alpha) { return eltwise(kernels::EltwiseOp::ELU, alpha, 0, "elu", x); }
Tensor selu(const Tensor& x, double scale, double alpha) {
  return eltwise(kernels::EltwiseOp::SELU, alpha, scale, "selu", x);
}
Tensor swish(const Tensor& x) { return eltwise(kernels::EltwiseOp::SWISH, 1.0, 0, "swish", x); }
Tensor mish(const Tensor& x) { return eltwise(kernels::EltwiseOp::MISH, 0, 0, "mish", x); }
Tensor hardsigmoid(const Tensor& x, double slope, double offset) {
  return eltwise(kernels::EltwiseOp::HARDSIGMOID, slope, offset, "hardsigmoid", x);
}
Tensor hardtanh(const Tensor& x, double min, double max) {
  CREW_CHECK(min < max, "hardtanh: min ", min, " must be below max ", max);
  return eltwise(kernels::EltwiseOp::HARDTANH, min, max, "hardtanh", x);
}
Tensor softsign(const Tensor& x) { return eltwise(kernels::EltwiseOp::SOFTSIGN, 0, 0, "softsign", x); }
Tensor tanhshrink(const Tensor& x) { return eltwise(kernels::EltwiseOp::TANHSHRINK, 0, 0, "tanhshrink", x); }

}  // namespace crew::nn::functional
