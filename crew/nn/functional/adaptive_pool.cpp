// adaptive_avg_pool2d (crew/tensor/kernels/adaptive_pool): Paddle's/PyTorch's bins; a 1x1
// output is a plain mean over each plane. Equal bins over a blocked input: avg_pool2d.
#include "crew/tensor/kernels/adaptive_pool.h"

#include "crew/autograd/autocast.h"
#include "crew/autograd/function.h"
#include "crew/nn/functional.h"
#include "crew/tensor/kernels/broadcast.h"
#include "crew/tensor/kernels/low_precision.h"

namespace crew::nn::functional {

Tensor adaptive_avg_pool2d(const Tensor& x, Pair output_size) {
  if (auto in = amp::autocast_operands("adaptive_avg_pool2d", x)) {
    return adaptive_avg_pool2d((*in)[0], output_size);
  }
  kernels::check_floating_or_half(x, "adaptive_avg_pool2d");  // 16-bit: summed in float32
  CREW_CHECK(x.dim() == 4, "adaptive_avg_pool2d: expected x [N, C, H, W], got ", shape_str(x.shape()));
  const int64_t oh = output_size[0], ow = output_size[1];
  CREW_CHECK(oh > 0 && ow > 0, "adaptive_avg_pool2d: output_size must be positive, got (", oh, ", ", ow, ")");
  CREW_CHECK(x.size(2) > 0 && x.size(3) > 0, "adaptive_avg_pool2d: empty plane in ", shape_str(x.shape()));
  if (x.layout() != nullptr && x.size(2) % oh == 0 && x.size(3) % ow == 0) {
    // A blocked x (a conv net's last activation before its global pool): equal bins are an
    // average pooling, which reads x as it is; the loop below would convert x to row-major
    // for it and for its other readers (the ReLU backward that saved it).
    const int64_t kh = x.size(2) / oh, kw = x.size(3) / ow;
    return avg_pool2d(x, {kh, kw}, {kh, kw}, {0, 0});
  }
  Tensor y = kernels::adaptive_avg_pool2d_forward(x, oh, ow);
  if (autograd::should_record({&x})) {
    autograd::record(y, "adaptive_avg_pool2d", {x},
                     [in = x.shape()](const Tensor& g, const std::vector<bool>&) {
                       return std::vector<Tensor>{kernels::adaptive_avg_pool2d_backward(g, in)};
                     });
  }
  return y;
}

}  // namespace crew::nn::functional
