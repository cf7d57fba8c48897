// conv2d, max_pool2d, avg_pool2d: oneDNN kernels (crew/tensor/kernels) plus their graph nodes.
#include "crew/autograd/autocast.h"
#include "crew/autograd/function.h"
#include "crew/nn/functional.h"
#include "crew/tensor/kernels/conv.h"
#include "crew/tensor/kernels/pool.h"

namespace crew::nn::functional {

Tensor conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias, Pair stride, Pair padding,
              Pair dilation, int64_t groups) {
  if (auto in = amp::autocast_operands("conv2d", x, weight, bias)) {
    return conv2d((*in)[0], (*in)[1], (*in)[2], stride, padding, dilation, groups);
  }
  const bool record = autograd::should_record({&x, &weight, &bias});
  const kernels::Conv2dParams p{stride, padding, dilation, groups,
                                record && weight.is_leaf() && weight.requires_grad()};
  std::shared_ptr<const kernels::Conv2dSaved> saved;
  Tensor y = kernels::conv2d_forward(x, weight, bias, p, record ? &saved : nullptr);
  if (record) {
    autograd::record(
        y, "conv2d", {x, weight, bias},
        [x, weight, p, saved, has_bias = bias.defined()](const Tensor& g, const std::vector<bool>& needs) {
          const kernels::Conv2dNeeds want{
              .data = needs[0], .weights = needs[1] || needs[2], .bias = has_bias};
          kernels::Conv2dGrads r = kernels::conv2d_backward(g, x, weight, x.shape(), p, want, saved);
          return std::vector<Tensor>{r.grad_x, r.grad_weight, r.grad_bias};
        },
        {x, weight});
  }
  return y;
}

namespace {

kernels::Pool2dParams pool_params(Pair kernel, Pair stride, Pair padding) {
  kernels::Pool2dParams p{kernel, stride, padding};
  if (stride[0] == 0 && stride[1] == 0) p.stride = kernel;
  return p;
}

Tensor pool(kernels::PoolKind kind, const char* name, const Tensor& x, const kernels::Pool2dParams& p) {
  if (auto in = amp::autocast_operands(name, x)) return pool(kind, name, (*in)[0], p);
  const bool record = autograd::should_record({&x});
  kernels::PoolForwardResult r = kernels::pool2d_forward(kind, x, p, record);
  if (record) {
    autograd::record(r.y, name, {x},
                     [kind, p, shape = x.shape(), ws = r.workspace, layout = r.x_layout](
                         const Tensor& g, const std::vector<bool>&) {
                       return std::vector<Tensor>{kernels::pool2d_backward(
                           kind, g, shape, ws, p, kernels::default_pool_impl(), layout)};
                     });
  }
  return r.y;
}

}  // namespace

Tensor max_pool2d(const Tensor& x, Pair kernel, Pair stride, Pair padding) {
  return pool(kernels::PoolKind::MAX, "max_pool2d", x, pool_params(kernel, stride, padding));
}

Tensor avg_pool2d(const Tensor& x, Pair kernel, Pair stride, Pair padding) {
  return pool(kernels::PoolKind::AVG, "avg_pool2d", x, pool_params(kernel, stride, padding));
}

}  // namespace crew::nn::functional
